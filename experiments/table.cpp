#include "table.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "progress.hpp"
#include "run.hpp"

namespace pe {

void run_table(const TableOptions& options) {
  std::vector<std::string> encodings = options.encodings;
  if (encodings.empty())
    for (const auto& entry : registered_encodings()) encodings.push_back(entry.name);
  ag::check(!options.tasks.empty() && !options.layers.empty(), "table",
            "needs at least one task and one layer count");

  nlohmann::json rows = nlohmann::json::array();
  std::string markdown = "| encoding | task | layers | steps | accuracy | train time (s) |\n"
                         "|---|---|---|---|---|---|\n";
  const std::size_t total = encodings.size() * options.tasks.size() * options.layers.size();
  std::size_t done = 0;
  Progress progress("table", std::int64_t(total));
  for (const auto& encoding : encodings)
    for (const auto& task : options.tasks)
      for (auto layers : options.layers) {
        TrainConfig config;  // the reference model and run
        config.encoding = encoding;
        config.task = task;
        config.model.layers = layers;
        config.seed = options.seed;
        config.steps = options.fast ? std::min<std::int64_t>(options.steps, 300) : options.steps;
        // TrainConfig's evaluation interval, as in `pe train` and the chapters' experiments, so
        // that a table row and a chapter's run of the same encoding are the same run.
        config.eval_every = std::min(config.eval_every, std::max<std::int64_t>(config.steps, 1));
        if (options.fast) config.eval_sequences = 64;
        const std::string name = encoding + "-" + task + "-l" + std::to_string(layers);
        progress.line("run " + std::to_string(++done) + "/" + std::to_string(total) + ": " + name);
        RunOptions run;
        run.out_dir = options.out_dir + "/" + name;
        std::optional<RunSummary> earlier;
        if (options.reuse) earlier = load_finished_run(config, run.out_dir);
        if (earlier) progress.line("  reusing the finished run in " + run.out_dir);
        const RunSummary summary = earlier ? *earlier : run_training(config, run);
        const Evaluation& e = summary.final.at(config.length);
        char line[256];
        std::snprintf(line, sizeof line, "| %s | %s | %ld | %ld | %.1f%% | %.0f%s |\n",
                      encoding.c_str(), task.c_str(), long(layers), long(config.steps),
                      100.0 * e.accuracy, summary.train_seconds, earlier ? " (reused)" : "");
        markdown += line;
        rows.push_back({{"encoding", encoding},
                        {"task", task},
                        {"layers", layers},
                        {"steps", config.steps},
                        {"seed", config.seed},
                        {"accuracy", e.accuracy},
                        {"loss", e.loss},
                        {"train_seconds", summary.train_seconds},
                        {"reused", bool(earlier)},
                        {"run", run.out_dir}});
      }
  progress.finish();
  std::ofstream md(options.out_dir + "/table.md");
  ag::check(md.good(), "table", "cannot write '", options.out_dir, "/table.md'");
  md << markdown;
  std::ofstream json(options.out_dir + "/table.json");
  json << nlohmann::json{{"versions", build_versions()}, {"rows", rows}}.dump(2) << "\n";
  std::printf("\n%s\nwritten to %s/table.md and table.json\n", markdown.c_str(),
              options.out_dir.c_str());
}

}  // namespace pe
