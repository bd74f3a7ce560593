#include "lab/table.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "ag/error.hpp"
#include "ag/files.hpp"
#include "base/command_line.hpp"
#include "base/folder_lock.hpp"
#include "lab/run.hpp"
#include "lab/summary.hpp"

namespace pe {

TrainConfig fast_table_config(TrainConfig config) {
  config.model.width = 64;
  config.model.ffn_width = 256;
  config.steps = 400;
  config.warmup = 50;
  config.lr = 5e-3;
  config.eval_every = 50;
  config.eval_sequences = 64;
  return config;
}

std::string fast_table_note() {
  const TrainConfig c = fast_table_config(TrainConfig{});
  char line[512];
  std::snprintf(line, sizeof line,
                "pe table --fast: a quick look, not the book's table: width %ld, feed-forward "
                "%ld, %ld steps at a peak learning rate of %g (%ld warm-up), %ld held-out "
                "sequences; the chapters quote the full table (pe table: width %ld, %ld steps)",
                long(c.model.width), long(c.model.ffn_width), long(c.steps), c.lr, long(c.warmup),
                long(c.eval_sequences), long(TrainConfig{}.model.width), long(TrainConfig{}.steps));
  return line;
}

TablePart table_part_from(const std::string& text) {
  if (text == "1") return TablePart::one;
  if (text == "2") return TablePart::two;
  if (text == "all") return TablePart::all;
  throw ag::Error("table: --part must be 1 (Part I, chapters up to " +
                  std::to_string(kFirstChapterOfPartTwo - 1) + "), 2 (Part II, chapter " +
                  std::to_string(kFirstChapterOfPartTwo) + " on) or all, got '" + text + "'");
}

std::vector<std::string> table_encodings(const std::vector<EncodingEntry>& registered,
                                         TablePart part) {
  std::vector<std::string> names;
  for (const EncodingEntry& entry : registered) {
    const std::string& chapter = entry.chapter;
    const bool number =
        !chapter.empty() && chapter.size() <= 3 &&
        std::all_of(chapter.begin(), chapter.end(), [](char c) { return c >= '0' && c <= '9'; });
    ag::check(number, "table", "encoding '", entry.name, "' names chapter '", chapter,
              "', not a chapter number");
    const bool later = std::stoi(chapter) >= kFirstChapterOfPartTwo;
    if (part == TablePart::all || later == (part == TablePart::two)) names.push_back(entry.name);
  }
  return names;
}

TrainConfig table_config(const TableOptions& options, const std::string& encoding,
                         const std::string& task, std::int64_t layers) {
  TrainConfig config;  // the reference model and run, as in the chapters' experiments
  config.encoding = encoding;
  config.task = task;
  config.model.layers = layers;
  config.seed = options.seed;
  config.steps = options.steps;
  return options.fast ? fast_table_config(config) : config;
}

namespace {

// A name given twice would train the same row twice into one folder.
template <class T>
void check_no_repeats(const std::vector<T>& values, const char* flag) {
  for (std::size_t i = 0; i < values.size(); ++i)
    for (std::size_t j = 0; j < i; ++j) {
      std::ostringstream value;
      value << values[i];
      ag::check(!(values[i] == values[j]), "table", flag, " names '", value.str(), "' twice");
    }
}

// The rows, trained or reused (run_or_reuse), as table.md and table.json in out_dir.
void write_table(const std::vector<PlannedRun>& planned, const RunListOptions& how,
                 const TableOptions& options, const std::string& out_dir) {
  nlohmann::json rows = nlohmann::json::array();
  std::string markdown =
      "| encoding | task | layers | steps | accuracy | train time (s) |\n"
      "|---|---|---|---|---|---|\n";
  // Every row is checked before the first one trains; the note comes after the checks, so that
  // a mistake is the only line printed.
  const std::vector<FinishedRun> finished = run_or_reuse(planned, how, [&] {
    if (options.fast) std::printf("%s\n", fast_table_note().c_str());
  });
  for (const FinishedRun& run : finished) {
    const TrainConfig& c = run.config;
    const Evaluation& e = run.summary.final.at(c.length);
    char line[256];
    std::snprintf(line, sizeof line, "| %s | %s | %ld | %ld | %.1f%% | %.0f%s |\n",
                  c.encoding.c_str(), c.task.c_str(), long(c.model.layers), long(c.steps),
                  100.0 * e.accuracy, run.summary.train_seconds, run.reused ? " (reused)" : "");
    markdown += line;
    rows.push_back({{"encoding", c.encoding},
                    {"task", c.task},
                    {"layers", c.model.layers},
                    {"steps", c.steps},
                    {"seed", c.seed},
                    {"accuracy", e.accuracy},
                    {"loss", e.loss},
                    {"train_seconds", run.summary.train_seconds},
                    {"reused", run.reused},
                    {"run", run.summary.out_dir}});
  }
  if (options.fast) markdown = fast_table_note() + "\n\n" + markdown;
  ag::write_file_atomically(out_dir + "/table.md", markdown);
  nlohmann::json table{{"versions", build_versions()}, {"rows", rows}};
  if (options.fast) table["fast"] = fast_table_note();
  ag::write_file_atomically(out_dir + "/table.json", table.dump(2) + "\n");
  std::printf("\n%s\nwritten to %s/table.md and table.json\n", markdown.c_str(), out_dir.c_str());
  if (!options.lengths.empty()) {
    const std::string lengths = options.length_table(finished, options.lengths, out_dir);
    std::printf("\n%s\nwritten to %s/lengths.md and lengths.json\n", lengths.c_str(),
                out_dir.c_str());
  } else {  // an earlier table's, which would not match this one
    for (const char* name : {"/lengths.md", "/lengths.json"}) std::remove((out_dir + name).c_str());
  }
}

}  // namespace

void run_table(const TableOptions& options) {
  source_commit();  // read as the table starts (run.hpp)
  std::vector<std::string> encodings = options.encodings;
  if (encodings.empty()) {
    encodings = table_encodings(registered_encodings(), options.part);
    const char* part = options.part == TablePart::one   ? "1"
                       : options.part == TablePart::two ? "2"
                                                        : "all";
    ag::check(!encodings.empty(), "table", "--part ", part,
              " selects no encoding: this program has no chapter of that part (see pe list)");
  }
  ag::check(!options.tasks.empty() && !options.layers.empty(), "table",
            "needs at least one task and one layer count");
  check_no_repeats(encodings, "--encodings");
  check_no_repeats(options.tasks, "--tasks");
  check_no_repeats(options.layers, "--layers");
  check_no_repeats(options.lengths, "--lengths");

  const std::string out_dir = !options.out_dir.empty()
                                  ? options.out_dir
                                  : (options.fast ? "results/table-fast" : "results/table");
  std::vector<PlannedRun> planned;
  for (const auto& encoding : encodings)
    for (const auto& task : options.tasks)
      for (auto layers : options.layers)
        planned.push_back({table_config(options, encoding, task, layers),
                           out_dir + "/" + encoding + "-" + task + "-l" + std::to_string(layers)});

  for (const std::int64_t length : options.lengths)
    ag::check(length >= 1, "table", "--lengths must be positive, got ", length);
  ag::check(options.lengths.empty() || options.length_table, "table",
            "--lengths needs chapter 8's evaluation past the training length, which this ",
            "program does not have");
  ag::check(options.jobs >= 0, "table", "--jobs must be 0 (one per core) or more, got ",
            options.jobs);
  const int cores = int(usable_cores());
  int jobs = options.jobs > 0 ? options.jobs : cores;
  if (jobs > cores) {
    std::fprintf(stderr,
                 "note: --jobs %d is more than the %d cores this program can use; "
                 "using %d\n",
                 jobs, cores, cores);
    jobs = cores;
  }
  const RunListOptions how{options.reuse, jobs, options.overwrite};
  FolderLock lock(out_dir, "table");  // before the rows' folders are looked at
  try {
    write_table(planned, how, options, out_dir);
  } catch (...) {
    lock.abandon();
    throw;
  }
}

}  // namespace pe
