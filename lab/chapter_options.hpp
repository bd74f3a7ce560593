// The options every encoding chapter's experiment takes: --steps N, --seed S, --out DIR,
// --retrain, --overwrite, --summary FILE (and --help), and --fast where the chapter offers a
// quick subset, read with the book's one command-line helper (base), and the frame
// around every such experiment.
#pragma once
#include <stdlib.h>  // mkstemp
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <exception>
#include <filesystem>
#include <functional>
#include <iostream>
#include <optional>
#include <string>

#include "ag/files.hpp"
#include "base/command_line.hpp"
#include "base/folder_lock.hpp"
#include "base/program_frame.hpp"
#include "lab/chapter_registry.hpp"
#include "lab/run.hpp"
#include "lab/summary.hpp"

namespace pe {

/// The options every chapter's experiment takes (chapter_command_line turns them into flags).
struct ChapterOptions {
  std::int64_t steps = 1500;  ///< the reference run's length
  std::uint64_t seed = 1;     ///< the seed of every run
  std::string out;            ///< folder for runs and figures
  /// false: take a run already finished in its folder with the same configuration
  /// (load_finished_run) instead of training it again; --retrain sets true.
  bool retrain = false;
  /// Replace runs of other configurations (another --steps or --seed) that the folders hold;
  /// without it they are refused before anything trains (check_previous_run).
  bool overwrite = false;
  /// Where the summary of the numbers the chapter quotes goes (summary.hpp); empty:
  /// `OUT/summary.json`, OUT being the output folder. The book's copy is
  /// chapters/NN-name/results/summary.json.
  std::string summary = "";
  /// Non-empty: the experiment offers `--fast`, a quick subset that this text describes in
  /// --help. The subset must not touch the runs the chapter quotes (its own --out default).
  std::string fast_help = "";
  bool fast = false;          ///< --fast was given
  std::string fast_out = "";  ///< the output folder under --fast when --out is not given

  /// How the chapter's runs go through run_or_reuse: reused unless --retrain, a run of another
  /// configuration replaced only with --overwrite, `jobs` at a time.
  RunListOptions run_list(int jobs = 1) const { return {!retrain, jobs, overwrite}; }
};

/// Every --seed of the book's programs, pe's and chapters 0 to 12's alike: 0 to 2^64 - 1.
/// Chapters derive the seeds of their other runs and held-out sets by adding to it (seed + s,
/// seed + 1000, seed + 2000), in std::uint64_t: near 2^64 the sums wrap around, which is
/// defined and harmless, since different offsets still give different seeds (modulo 2^64).
inline const CLI::Validator kSeedRange = whole_number<std::uint64_t>(0);

/// Reads the experiment's command line: the four options, with the values in `options` as
/// their defaults, and --help with `description`. Returns the status to exit with at once
/// (parse_command_line: 0 after --help, 2 after a mistake), or nothing to go on.
inline std::optional<int> parse_chapter_options(int argc, char** argv, const std::string& program,
                                                const std::string& description,
                                                ChapterOptions& options) {
  CLI::App app{description, program};
  auto* steps = app.add_option("--steps", options.steps, "training steps of each run")
                    ->capture_default_str()
                    ->check(whole_number<std::int64_t>(1, limits::steps.high));
  app.add_option("--seed", options.seed, "random seed of each run (weights and data)")
      ->capture_default_str()
      ->check(kSeedRange);
  auto* out = app.add_option("--out", options.out, "folder for the runs and figures")
                  ->capture_default_str()
                  ->check(not_empty("a folder"));
  if (!options.fast_help.empty())
    app.add_flag("--fast", options.fast, options.fast_help)->excludes(steps);
  app.add_flag("--retrain", options.retrain,
               "train every run again, even one that finished in its folder with the same "
               "configuration");
  app.add_flag("--overwrite", options.overwrite,
               "replace runs of another configuration (other --steps or --seed) that the "
               "output folder holds");
  app.add_option("--summary", options.summary,
                 "file for the summary of the results the chapter quotes, in a folder that "
                 "exists (default: <out>/summary.json)")
      ->check(not_empty("a file"));
  const auto status = parse_command_line(app, argc, argv);
  if (!status && options.fast && out->count() == 0 && !options.fast_out.empty())
    options.out = options.fast_out;
  return status;
}

/// Fails unless `path` can be written later: its folder exists (a typing mistake should not
/// make folders), it is not a folder, and a file can be made beside it. Checked before the
/// experiment trains anything, not hours later.
inline void check_output_file(const std::string& path, const char* what) {
  namespace fs = std::filesystem;
  std::error_code error;
  const fs::path folder = fs::path(path).has_parent_path() ? fs::path(path).parent_path() : ".";
  // A missing folder or a folder's name is the command line's mistake (exit status 2); a
  // folder that refuses the file below is the disk's (1).
  if (!fs::is_directory(folder, error))
    throw UsageError(ag::detail::concat(what, ": cannot write '", path, "': folder '",
                                        folder.string(), "' does not exist"));
  if (fs::is_directory(path, error))
    throw UsageError(ag::detail::concat(what, ": cannot write '", path, "': it is a folder"));
  std::string probe = (folder / ".write-test-XXXXXX").string();
  const int fd = ::mkstemp(probe.data());
  ag::check(fd >= 0, what, "cannot write '", path, "': ", std::strerror(errno));
  ::close(fd);
  ::unlink(probe.c_str());
}

/// The frame of an encoding chapter's experiment: reads its options (defaults from
/// `defaults`), registers the encodings of the chapters up to this one, checks the summary's
/// path, makes the output folder and holds its lock (folder_lock.hpp: a second program on
/// the same folder is refused at once), runs `experiment` while copying what it prints into
/// its summary (summary.hpp), writes the summary, and turns any error into one line on stderr
/// and the exit status of program_frame.hpp (run_program: 2 for the command line's mistakes, 1
/// when the work failed, standard output included).
inline int run_chapter_experiment(int argc, char** argv, const std::string& program,
                                  const std::string& description, ChapterOptions defaults,
                                  const std::function<void(const ChapterOptions&)>& experiment) {
  return run_program(
      program,
      [&] {
        ChapterOptions options = std::move(defaults);
        if (auto status = parse_chapter_options(argc, argv, program, description, options))
          return *status;
        source_commit();  // read now, as the experiment starts (run.hpp)
        register_chapter_encodings();
        const std::string path =
            options.summary.empty() ? options.out + "/summary.json" : options.summary;
        // A summary straight in the output folder needs only the folder the lock makes below.
        const auto as_folder = [](const std::filesystem::path& p) {
          return (p / "").lexically_normal();
        };
        if (!options.summary.empty() &&
            as_folder(std::filesystem::path(path).parent_path()) != as_folder(options.out))
          check_output_file(path, "--summary");
        FolderLock lock(options.out, "");  // the error gets the program's name below
        try {
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
          ag::write_file_atomically(path, summary.dump(1) + "\n");
        } catch (...) {
          lock.abandon();
          throw;
        }
        std::cerr << "summary of the quoted results in " << path << "\n";
        return int(kExitDone);
      },
      "running the experiment (" + program + ")");
}

}  // namespace pe
