// The options every encoding chapter's experiment takes: --steps N, --seed S, --out DIR,
// --retrain (and --help), and --fast where the chapter offers a quick subset, read with the
// book's one command-line helper (tools/cli), and the frame around every such experiment.
#pragma once
#include <cstdint>
#include <exception>
#include <filesystem>
#include <functional>
#include <iostream>
#include <optional>
#include <string>

#include "ag/files.hpp"
#include "chapter_registry.hpp"
#include "command_line.hpp"
#include "run.hpp"
#include "summary.hpp"

namespace pe {

/// The four options every chapter's experiment takes.
struct ChapterOptions {
  std::int64_t steps = 1500;  ///< the reference run's length
  std::uint64_t seed = 1;     ///< the seed of every run
  std::string out;            ///< folder for runs and figures
  /// false: take a run already finished in its folder with the same configuration
  /// (load_finished_run) instead of training it again; --retrain sets true.
  bool retrain = false;
  /// Where the summary of the numbers the chapter quotes goes (summary.hpp); empty:
  /// `OUT/summary.json`, OUT being the output folder. The book's copy is
  /// chapters/NN-name/results/summary.json.
  std::string summary = "";
  /// Non-empty: the experiment offers `--fast`, a quick subset that this text describes in
  /// --help. The subset must not touch the runs the chapter quotes (its own --out default).
  std::string fast_help = "";
  bool fast = false;  ///< --fast was given
  std::string fast_out = "";  ///< the output folder under --fast when --out is not given
};

/// Reads the experiment's command line: the four options, with the values in `options` as
/// their defaults, and --help with `description`. Returns the status to exit with at once
/// (parse_command_line: 0 after --help, 2 after a mistake), or nothing to go on.
inline std::optional<int> parse_chapter_options(int argc, char** argv, const std::string& program,
                                                const std::string& description,
                                                ChapterOptions& options) {
  CLI::App app{description, program};
  auto* steps = app.add_option("--steps", options.steps, "training steps of each run")
                    ->capture_default_str()
                    ->check(integer_at_least(1));
  app.add_option("--seed", options.seed, "random seed of each run (weights and data)")
      ->capture_default_str()
      ->check(integer_at_least(1));
  auto* out =
      app.add_option("--out", options.out, "folder for the runs and figures")->capture_default_str();
  if (!options.fast_help.empty()) app.add_flag("--fast", options.fast, options.fast_help)->excludes(steps);
  app.add_flag("--retrain", options.retrain,
               "train every run again, even one that finished in its folder with the same "
               "configuration");
  app.add_option("--summary", options.summary,
                 "file for the summary of the results the chapter quotes (default: "
                 "<out>/summary.json)");
  const auto status = parse_command_line(app, argc, argv);
  if (!status && options.fast && out->count() == 0 && !options.fast_out.empty())
    options.out = options.fast_out;
  return status;
}

/// The frame of an encoding chapter's experiment: reads its options (defaults from
/// `defaults`), registers the encodings of the chapters up to this one, makes the output folder,
/// runs `experiment` while copying what it prints into its summary (summary.hpp), writes the
/// summary, and turns any error into one line on stderr and exit status 1.
inline int run_chapter_experiment(int argc, char** argv, const std::string& program,
                                  const std::string& description, ChapterOptions defaults,
                                  const std::function<void(const ChapterOptions&)>& experiment) {
  ChapterOptions options = std::move(defaults);
  if (auto status = parse_chapter_options(argc, argv, program, description, options))
    return *status;
  try {
    register_chapter_encodings();
    std::filesystem::create_directories(options.out);
    nlohmann::json& summary = experiment_summary();
    summary["experiment"] = program;
    summary["steps"] = options.steps;
    summary["seed"] = options.seed;
    summary["versions"] = build_versions();
    {
      StdoutCapture capture;
      experiment(options);
      summary["output"] = split_lines(capture.finish());
    }
    const std::string path =
        options.summary.empty() ? options.out + "/summary.json" : options.summary;
    if (const auto folder = std::filesystem::path(path).parent_path(); !folder.empty())
      std::filesystem::create_directories(folder);
    ag::write_file_atomically(path, summary.dump(1) + "\n");
    std::cerr << "summary of the quoted results in " << path << "\n";
  } catch (const std::exception& e) {
    std::cerr << program << ": " << e.what() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace pe
