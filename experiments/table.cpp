#include "table.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "ag/files.hpp"
#include "run.hpp"

namespace pe {

void run_table(const TableOptions& options) {
  std::vector<std::string> encodings = options.encodings;
  if (encodings.empty())
    for (const auto& entry : registered_encodings()) encodings.push_back(entry.name);
  ag::check(!options.tasks.empty() && !options.layers.empty(), "table",
            "needs at least one task and one layer count");

  std::vector<PlannedRun> planned;
  for (const auto& encoding : encodings)
    for (const auto& task : options.tasks)
      for (auto layers : options.layers) {
        TrainConfig config;  // the reference model and run, as in the chapters' experiments
        config.encoding = encoding;
        config.task = task;
        config.model.layers = layers;
        config.seed = options.seed;
        config.steps = options.fast ? std::min<std::int64_t>(options.steps, 300) : options.steps;
        if (options.fast) config.eval_sequences = 64;
        planned.push_back({config, options.out_dir + "/" + encoding + "-" + task + "-l" +
                                       std::to_string(layers)});
      }

  ag::check(options.jobs >= 0, "table", "--jobs must be 0 (one per core) or more, got ",
            options.jobs);
  const int jobs = options.jobs > 0 ? options.jobs
                                    : int(std::max(1u, std::thread::hardware_concurrency()));

  nlohmann::json rows = nlohmann::json::array();
  std::string markdown = "| encoding | task | layers | steps | accuracy | train time (s) |\n"
                         "|---|---|---|---|---|---|\n";
  for (const FinishedRun& run : run_or_reuse(planned, options.reuse, jobs)) {
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
  ag::write_file_atomically(options.out_dir + "/table.md", markdown);
  ag::write_file_atomically(options.out_dir + "/table.json",
                            nlohmann::json{{"versions", build_versions()}, {"rows", rows}}.dump(2) + "\n");
  std::printf("\n%s\nwritten to %s/table.md and table.json\n", markdown.c_str(),
              options.out_dir.c_str());
}

}  // namespace pe
