// The options every encoding chapter's experiment takes: --steps N, --seed S, --out DIR,
// --retrain (and --help), read with the book's one command-line helper (tools/cli).
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "command_line.hpp"

namespace pe {

struct ChapterOptions {
  std::int64_t steps = 1500;  ///< the reference run's length
  std::uint64_t seed = 1;
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

}  // namespace pe
