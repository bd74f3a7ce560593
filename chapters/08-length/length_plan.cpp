#include "chapters/08-length/length_plan.hpp"

#include <algorithm>

namespace pe::ch08 {

// [length-config]
TrainConfig length_config(const Variant& v, const std::string& task, std::int64_t steps,
                          std::uint64_t seed) {
  TrainConfig c;
  c.task = task;
  c.encoding = v.encoding;
  c.model.layers = v.layers;
  c.model.width = kWidth;
  c.model.heads = v.heads;
  c.model.ffn_width = 256;
  c.length = kTrainLength;
  c.batch = 32;
  c.steps = steps;
  c.warmup = std::min<std::int64_t>(100, steps / 10);
  c.lr = 3e-3;
  c.seed = seed;
  c.eval_every = steps;   // one evaluation, at the end: the curve is not this chapter's question
  c.eval_sequences = 64;  // the run's own check at length 32
  return c;
}
// [length-config]

std::string run_name(const Variant& v) {
  return v.encoding + "-l" + std::to_string(v.layers) +
         (v.heads == kHeads ? "" : "-h" + std::to_string(v.heads));
}

std::string run_folder(const std::string& out, const std::string& task, const Variant& v,
                       std::uint64_t seed) {
  return out + "/runs/" + task + "/" + run_name(v) + "-s" + std::to_string(seed);
}

std::vector<LengthRun> plan_length_runs(const std::string& out, std::uint64_t first_seed,
                                        std::int64_t seeds, std::int64_t steps,
                                        const std::string& corpus, std::int64_t vocabulary) {
  std::vector<Variant> rows = kVariants;
  rows.insert(rows.end(), kHeadWidthVariants.begin(), kHeadWidthVariants.end());
  std::vector<LengthRun> planned;
  for (std::int64_t s = 0; s < seeds; ++s)
    for (const std::string& task : kTasks)
      for (const Variant& v : rows) {
        const std::uint64_t seed = first_seed + std::uint64_t(s);
        TrainConfig c = length_config(v, task, steps, seed);
        if (task == "charlm") {
          c.task_options["corpus"] = corpus;
          c.model.vocab = vocabulary;
        }
        planned.push_back({v, {c, run_folder(out, task, v, seed)}});
      }
  return planned;
}

}  // namespace pe::ch08
