// The options every encoding chapter's experiment takes: --steps N, --seed S, --out DIR,
// --retrain (and --help), read with the book's one command-line helper (tools/cli), and the
// frame around every such experiment.
#pragma once
#include <cstdint>
#include <exception>
#include <filesystem>
#include <functional>
#include <iostream>
#include <optional>
#include <string>

#include "chapter_registry.hpp"
#include "command_line.hpp"

namespace pe {

/// The four options every chapter's experiment takes.
struct ChapterOptions {
  std::int64_t steps = 1500;  ///< the reference run's length
  std::uint64_t seed = 1;     ///< the seed of every run
  std::string out;            ///< folder for runs and figures
  /// false: take a run already finished in its folder with the same configuration
  /// (load_finished_run) instead of training it again; --retrain sets true.
  bool retrain = false;
};

/// Reads the experiment's command line: the four options, with the values in `options` as
/// their defaults, and --help with `description`. Returns the status to exit with at once
/// (parse_command_line: 0 after --help, 2 after a mistake), or nothing to go on.
inline std::optional<int> parse_chapter_options(int argc, char** argv, const std::string& program,
                                                const std::string& description,
                                                ChapterOptions& options) {
  CLI::App app{description, program};
  app.add_option("--steps", options.steps, "training steps of each run")
      ->capture_default_str()
      ->check(integer_at_least(1));
  app.add_option("--seed", options.seed, "random seed of each run (weights and data)")
      ->capture_default_str()
      ->check(integer_at_least(1));
  app.add_option("--out", options.out, "folder for the runs and figures")->capture_default_str();
  app.add_flag("--retrain", options.retrain,
               "train every run again, even one that finished in its folder with the same "
               "configuration");
  return parse_command_line(app, argc, argv);
}

/// The frame of an encoding chapter's experiment: reads its options (defaults from
/// `defaults`), registers the encodings of the chapters up to this one, makes the output folder,
/// runs `experiment`, and turns any error into one line on stderr and exit status 1.
inline int run_chapter_experiment(int argc, char** argv, const std::string& program,
                                  const std::string& description, ChapterOptions defaults,
                                  const std::function<void(const ChapterOptions&)>& experiment) {
  ChapterOptions options = std::move(defaults);
  if (auto status = parse_chapter_options(argc, argv, program, description, options))
    return *status;
  try {
    register_chapter_encodings();
    std::filesystem::create_directories(options.out);
    experiment(options);
  } catch (const std::exception& e) {
    std::cerr << program << ": " << e.what() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace pe
