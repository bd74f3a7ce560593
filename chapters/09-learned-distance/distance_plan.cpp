#include "chapters/09-learned-distance/distance_plan.hpp"

namespace pe::ch09 {

TrainConfig distance_config(const Row& row, const std::string& task, std::int64_t steps,
                            std::uint64_t seed) {
  TrainConfig c = ch08::length_config({row.name, row.encoding, 2}, task, steps, seed);
  c.encoding_options = row.options;
  c.random_positions = row.random_positions;
  return c;
}

std::string run_name(const Row& row) {
  std::string name = row.encoding;
  for (const auto& [key, value] : row.options) name += "-" + key + "=" + value;
  if (row.random_positions > 0) name += "-rp" + std::to_string(row.random_positions);
  return name;
}

std::vector<DistanceRun> plan_distance_runs(const std::string& out, std::uint64_t first_seed,
                                            std::int64_t seeds, std::int64_t steps,
                                            const std::string& corpus, std::int64_t vocabulary) {
  std::vector<DistanceRun> planned;
  for (std::int64_t s = 0; s < seeds; ++s)
    for (const std::string& task : ch08::kTasks)
      for (const Row& row : kRows) {
        const std::uint64_t seed = first_seed + std::uint64_t(s);
        TrainConfig c = distance_config(row, task, steps, seed);
        if (task == "charlm") {
          c.task_options["corpus"] = corpus;
          c.model.vocab = vocabulary;
        }
        planned.push_back(
            {row, {c, out + "/runs/" + task + "/" + run_name(row) + "-s" + std::to_string(seed)}});
      }
  return planned;
}

}  // namespace pe::ch09
