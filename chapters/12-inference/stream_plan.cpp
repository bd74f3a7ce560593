#include "chapters/12-inference/stream_plan.hpp"

#include "ag/error.hpp"
#include "chapters/08-length/length_plan.hpp"

namespace pe::ch12 {

TrainConfig stream_config(const std::string& encoding, bool learned_sinks, std::int64_t steps,
                          std::uint64_t seed) {
  TrainConfig c = ch08::length_config({encoding, encoding, 2}, "charlm", steps, seed);
  c.model.sink_logits = learned_sinks;
  return c;
}

std::string model_name(const std::string& encoding, bool learned_sinks) {
  return encoding + (learned_sinks ? "-sinks" : "");
}

std::vector<StreamRun> plan_stream_runs(const std::string& out, std::uint64_t first_seed,
                                        std::int64_t seeds, std::int64_t steps,
                                        const std::string& corpus, std::int64_t vocabulary) {
  std::vector<StreamRun> planned;
  for (std::int64_t s = 0; s < seeds; ++s)
    for (const std::string& encoding : kEncodings)
      for (const bool sinks : {false, true}) {
        const std::uint64_t seed = first_seed + std::uint64_t(s);
        TrainConfig c = stream_config(encoding, sinks, steps, seed);
        c.task_options["corpus"] = corpus;
        c.model.vocab = vocabulary;
        planned.push_back(
            {encoding,
             sinks,
             {c, out + "/runs/" + model_name(encoding, sinks) + "-s" + std::to_string(seed)}});
      }
  return planned;
}

double stretch_mean(const std::vector<double>& bits, const Stretch& stretch) {
  ag::check(stretch.begin >= 1 && stretch.begin < stretch.end &&
                stretch.end - 1 <= static_cast<std::int64_t>(bits.size()),
            "stretch_mean", "positions ", stretch.begin, " .. ", stretch.end - 1,
            " are not predicted in a stream of ", bits.size() + 1, " tokens");
  double sum = 0;
  for (std::int64_t p = stretch.begin; p < stretch.end; ++p) sum += bits[p - 1];
  return sum / double(stretch.end - stretch.begin);
}

std::pair<std::vector<double>, std::vector<double>> smoothed(const std::vector<double>& bits,
                                                             std::int64_t width) {
  ag::check(width >= 1, "smoothed", "the window must hold at least one value, got ", width);
  std::vector<double> x, y;
  const auto n = static_cast<std::int64_t>(bits.size());
  for (std::int64_t start = 0; start + width <= n; start += width) {
    double sum = 0;
    for (std::int64_t i = start; i < start + width; ++i) sum += bits[i];
    x.push_back(double(start + 1) + double(width - 1) / 2);  // bits[i] scores position i + 1
    y.push_back(sum / double(width));
  }
  return {x, y};
}

}  // namespace pe::ch12
