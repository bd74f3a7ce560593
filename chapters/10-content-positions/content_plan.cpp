#include "chapters/10-content-positions/content_plan.hpp"

#include "lab/tasks.hpp"

namespace pe::ch10 {

TrainConfig content_config(const Row& row, const std::string& task, std::int64_t steps,
                           std::uint64_t seed) {
  return ch08::length_config({row.name, row.encoding, 2}, task, steps, seed);
}

std::vector<ContentRun> plan_content_runs(const std::string& out, std::uint64_t first_seed,
                                          std::int64_t seeds, std::int64_t steps,
                                          const std::string& corpus, std::int64_t vocabulary) {
  std::vector<std::string> tasks = kContentTasks;
  tasks.insert(tasks.end(), kLengthTasks.begin(), kLengthTasks.end());
  std::vector<ContentRun> planned;
  for (std::int64_t s = 0; s < seeds; ++s)
    for (const std::string& task : tasks)
      for (const Row& row : kRows) {
        const std::uint64_t seed = first_seed + std::uint64_t(s);
        TrainConfig c = content_config(row, task, steps, seed);
        // The vocabulary the trainer would size the model by, so that a finished run's
        // configuration matches and is reused (the content tasks have tokens of their own).
        if (task == "charlm") {
          c.task_options["corpus"] = corpus;
          c.model.vocab = vocabulary;
        } else {
          c.model.vocab = make_task(task)->vocab_size();
        }
        planned.push_back(
            {row, {c, out + "/runs/" + task + "/" + row.encoding + "-s" + std::to_string(seed)}});
      }
  return planned;
}

}  // namespace pe::ch10
