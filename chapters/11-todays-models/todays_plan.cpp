#include "chapters/11-todays-models/todays_plan.hpp"

#include <cstdio>
#include <functional>

#include "ag/error.hpp"
#include "chapters/08-length/context_extension.hpp"

namespace pe::ch11 {

TrainConfig todays_config(const Row& row, const std::string& task, std::int64_t steps,
                          std::uint64_t seed) {
  TrainConfig c = ch08::length_config({row.name, row.encoding, 2}, task, steps, seed);
  c.encoding_options = row.options;
  return c;
}

std::string run_name(const Row& row) {
  std::string name = row.encoding;
  for (const auto& [key, value] : row.options) name += "-" + key + "=" + value;
  return name;
}

std::vector<TodaysRun> plan_todays_runs(const std::string& out, std::uint64_t first_seed,
                                        std::int64_t seeds, std::int64_t steps,
                                        const std::string& corpus, std::int64_t vocabulary) {
  std::vector<TodaysRun> planned;
  for (std::int64_t s = 0; s < seeds; ++s)
    for (const std::string& task : ch08::kTasks)
      for (const Row& row : kRows) {
        const std::uint64_t seed = first_seed + std::uint64_t(s);
        TrainConfig c = todays_config(row, task, steps, seed);
        if (task == "charlm") {
          c.task_options["corpus"] = corpus;
          c.model.vocab = vocabulary;
        }
        planned.push_back(
            {row, {c, out + "/runs/" + task + "/" + run_name(row) + "-s" + std::to_string(seed)}});
      }
  return planned;
}

namespace {
std::string number(double value) {
  char s[32];
  std::snprintf(s, sizeof s, "%g", value);
  return s;
}
}  // namespace

std::map<std::string, std::string> stretch_options(const std::string& rule, double scale,
                                                   std::int64_t train_length,
                                                   const std::vector<double>& long_factor) {
  const std::string L = std::to_string(train_length);
  if (rule == "llama3")
    return {{"rope_type", "llama3"},
            {"factor", number(scale)},
            {"original_max_position_embeddings", L},
            {"low_freq_factor", number(kLowFreqFactor)},
            {"high_freq_factor", number(kHighFreqFactor)}};
  if (rule == "longrope") {
    ag::check(!long_factor.empty(), "stretch_options", "longrope needs its long factors");
    std::string shorts, longs;
    for (double f : long_factor) {  // appended piece by piece (g++ 12 warns on "," + s)
      if (!shorts.empty()) shorts.append(","), longs.append(",");
      shorts.append("1");
      longs.append(number(f));
    }
    return {{"rope_type", "longrope"},
            {"factor", number(scale)},
            {"original_max_position_embeddings", L},
            {"short_factor", shorts},
            {"long_factor", longs}};
  }
  return rope_scaling_encoding_options(rule, scale, train_length);
}

std::vector<std::vector<double>> longrope_search_space(const std::vector<double>& candidates,
                                                       std::int64_t planes) {
  std::vector<std::vector<double>> space;
  std::vector<double> choice;
  const std::function<void(std::size_t)> extend = [&](std::size_t from) {
    if (std::int64_t(choice.size()) == planes) {
      space.push_back(choice);
      return;
    }
    for (std::size_t c = from; c < candidates.size(); ++c) {
      choice.push_back(candidates[c]);
      extend(c);
      choice.pop_back();
    }
  };
  extend(0);
  return space;
}

}  // namespace pe::ch11
