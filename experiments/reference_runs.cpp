#include "reference_runs.hpp"

#include <cstdio>
#include <filesystem>
#include <optional>

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
    std::optional<RunSummary> earlier;
    if (!options.retrain) earlier = load_finished_run(run.config, run.run_dir);
    if (earlier)
      std::fprintf(stderr, "%s: reusing the finished run in %s (--retrain trains it again)\n",
                   task.c_str(), run.run_dir.c_str());
    run.summary = earlier ? *earlier : run_training(run.config, where);
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
    run.trainer = Trainer::resume(run.run_dir + "/checkpoint.agt");
    run.attention = mean_attention(*run.trainer, run.config.length, 256);
    std::filesystem::copy_file(run.run_dir + "/attention.png",
                               options.out + "/attention_" + task + suffix + ".png",
                               std::filesystem::copy_options::overwrite_existing);
    runs.push_back(std::move(run));
  }
  return runs;
}

void print_reference_runs(const std::string& heading, const std::vector<ReferenceRun>& runs,
                          std::int64_t max_offset) {
  std::printf("\n%s\n", heading.c_str());
  for (const ReferenceRun& run : runs) std::printf("%s\n", run.line.c_str());
  auto print = [&](const char* what, const auto& field) {
    std::printf("\nmean attention weight %s, 0 .. %ld:\n", what, long(max_offset));
    for (const ReferenceRun& run : runs)
      for (std::size_t layer = 0; layer < (run.attention.*field).size(); ++layer)
        for (std::size_t h = 0; h < (run.attention.*field)[layer].size(); ++h) {
          std::printf("%-12s layer %zu head %zu:", run.config.task.c_str(), layer + 1, h + 1);
          const auto& profile = (run.attention.*field)[layer][h];
          for (std::int64_t r = 0; r <= max_offset && r < std::int64_t(profile.size()); ++r)
            std::printf(" %.3f", profile[r]);
          std::printf("\n");
        }
  };
  print("on the key r positions back, r", &AttentionAverages::by_offset);
  print("on key j (over the queries that see it), j", &AttentionAverages::by_key);
}

}  // namespace pe
