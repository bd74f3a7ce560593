#include "lab/reference_runs.hpp"

#include <cstdio>

#include "ag/files.hpp"
#include "lab/summary.hpp"

namespace pe {

TrainConfig reference_config(const std::string& encoding, const std::string& task,
                             const ChapterOptions& options) {
  TrainConfig config;
  config.task = task;
  config.encoding = encoding;
  config.steps = options.steps;
  config.seed = options.seed;
  return config;
}

std::vector<ReferenceRun> train_reference_runs(const std::string& encoding,
                                               const ChapterOptions& options,
                                               const std::vector<ReferenceGroup>& groups) {
  std::vector<PlannedRun> planned;
  std::vector<std::string> suffixes;  // of each planned run
  for (const ReferenceGroup& group : groups)
    for (const std::string& task : group.tasks) {
      TrainConfig config = reference_config(encoding, task, options);
      if (group.adjust) group.adjust(config);
      planned.push_back({config, options.out + "/" + task + group.suffix});
      suffixes.push_back(group.suffix);
    }
  std::vector<ReferenceRun> runs;
  std::vector<FinishedRun> finished_runs = run_or_reuse(planned, options.run_list());
  for (std::size_t i = 0; i < finished_runs.size(); ++i) {
    FinishedRun& finished = finished_runs[i];
    const std::string& suffix = suffixes[i];
    ReferenceRun run;
    run.line = result_line(finished);
    run.config = finished.config;
    run.summary = finished.summary;
    run.run_dir = finished.summary.out_dir;
    run.trainer = Trainer::resume(run.run_dir + "/checkpoint.agt");
    run.attention = mean_attention(*run.trainer, run.config.length, 256);
    record_summary_run(run.config.task + suffix, finished, run.trainer.get(), &run.attention);
    // Copied whole or not at all, as every file a run writes.
    const std::string figure = run.run_dir + "/attention.png";
    ag::write_file_atomically(options.out + "/attention_" + run.config.task + suffix + ".png",
                              ag::read_file(figure, 256u << 20, "attention figure"));
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
