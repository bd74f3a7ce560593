// The options every chapter's experiment takes: --steps N, --seed S, --out DIR, --retrain.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>

namespace pe {

struct ChapterOptions {
  std::int64_t steps = 1500;  ///< the reference run's length
  std::uint64_t seed = 1;
  std::string out;            ///< folder for runs and figures
  /// false: take a run already finished in its folder with the same configuration
  /// (load_finished_run) instead of training it again; --retrain sets true.
  bool retrain = false;
};

/// Reads argv; a bad value or an unknown option throws std::invalid_argument with a one-line
/// message (the experiment prints it and exits with status 2).
inline ChapterOptions parse_chapter_options(int argc, char** argv, const std::string& default_out) {
  ChapterOptions options;
  options.out = default_out;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(arg + " needs a value");
      return argv[++i];
    };
    auto positive = [&](const std::string& text) {
      std::size_t used = 0;
      long long v = -1;
      try {
        v = std::stoll(text, &used);
      } catch (const std::exception&) {
      }
      if (used != text.size() || v < 1)
        throw std::invalid_argument(arg + " needs a positive integer, got '" + text + "'");
      return v;
    };
    if (arg == "--steps") options.steps = positive(value());
    else if (arg == "--seed") options.seed = static_cast<std::uint64_t>(positive(value()));
    else if (arg == "--out") options.out = value();
    else if (arg == "--retrain") options.retrain = true;
    else
      throw std::invalid_argument("unknown option '" + arg +
                                  "' (expected --steps, --seed, --out or --retrain)");
  }
  return options;
}

}  // namespace pe
