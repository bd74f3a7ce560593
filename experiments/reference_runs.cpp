#include "reference_runs.hpp"

#include <cstdio>

namespace pe {

std::vector<ReferenceRun> train_reference_runs(const std::string& encoding,
                                               const ChapterOptions& options,
                                               const std::vector<std::string>& tasks,
                                               const std::string& suffix,
                                               const std::function<void(TrainConfig&)>& adjust) {
  std::vector<ReferenceRun> runs;
  for (const std::string& task : tasks) {
    ReferenceRun run;
    run.config.task = task;
    run.config.encoding = encoding;
    run.config.steps = options.steps;
    run.config.seed = options.seed;
    if (adjust) adjust(run.config);
    RunOptions where;
    where.out_dir = run.run_dir = options.out + "/" + task + suffix;
    run.summary = run_training(run.config, where);
    const Evaluation& e = run.summary.final.at(run.config.length);
    char line[240];
    std::snprintf(line, sizeof line,
                  "%-11s %-12s %ld layer%s %ld head%s  %5ld steps  seed %lu  accuracy %.4f  "
                  "loss %.4f  (%.0f s)",
                  encoding.c_str(), task.c_str(), long(run.config.model.layers),
                  run.config.model.layers == 1 ? " " : "s", long(run.config.model.heads),
                  run.config.model.heads == 1 ? " " : "s", long(run.config.steps),
                  (unsigned long)run.config.seed, e.accuracy, e.loss, run.summary.train_seconds);
    run.line = line;
    runs.push_back(std::move(run));
  }
  return runs;
}

void print_reference_runs(const std::string& heading, const std::vector<ReferenceRun>& runs) {
  std::printf("\n%s\n", heading.c_str());
  for (const ReferenceRun& run : runs) std::printf("%s\n", run.line.c_str());
}

}  // namespace pe
