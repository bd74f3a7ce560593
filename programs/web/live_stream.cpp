#include "programs/web/live_stream.hpp"

#include <nlohmann/json.hpp>

#include "chapters/12-inference/window_cache.hpp"

namespace pe::live {

namespace {
// Streams longer than this would take seconds a request in the browser and draw more points
// than the plot has pixels.
constexpr std::int64_t kLongestStream = 4096;
}  // namespace

nlohmann::json stream_losses(Trainer& trainer, const nlohmann::json& request) {
  for (const auto& [key, value] : request.items())
    ag::check(
        key == "sinks" || key == "window" || key == "positions" || key == "length" || key == "seed",
        "stream", "unknown key '", key, "' (sinks, window, positions, length, seed)");
  WindowOptions options;
  options.sinks = request.value("sinks", std::int64_t(0));
  options.window = request.value("window", std::int64_t(0));
  options.positions = parse_stream_positions(request.value("positions", std::string("cache")));
  const auto length = request.value("length", std::int64_t(1024));
  const auto seed = request.value("seed", std::uint64_t(1));
  ag::check(options.window >= 1 && options.window <= kLongestStream, "stream", "window ",
            options.window, " is outside 1 .. ", kLongestStream);
  ag::check(length >= 2 && length <= kLongestStream, "stream", "length ", length,
            " is outside 2 .. ", kLongestStream);
  check_window_options(options);
  // A stretch of the task's text: the inputs and, after them, the last input's target.
  const Batch sample = trainer.task().held_out(1, length - 1, seed);
  std::vector<std::int64_t> tokens = sample.inputs.values;
  tokens.push_back(sample.targets.values.back());
  const std::vector<double> bits = stream_bits(trainer.model(), tokens, options);
  const std::int64_t train_length = trainer.config().length;
  std::vector<double> running(bits.size());
  double total = 0, within = 0, past = 0;
  std::int64_t past_count = 0;
  for (std::size_t t = 0; t < bits.size(); ++t) {
    total += bits[t];
    running[t] = total / double(t + 1);
    if (static_cast<std::int64_t>(t) < train_length) {
      within += bits[t];
    } else {
      past += bits[t];
      ++past_count;
    }
  }
  std::vector<std::string> text;
  for (std::int64_t id : tokens) text.push_back(trainer.task().token_text(id));
  const auto within_count = std::min<std::int64_t>(train_length, std::ssize(bits));
  return {{"sinks", options.sinks},
          {"window", options.window},
          {"positions", stream_positions_name(options.positions)},
          {"length", length},
          {"seed", seed},
          {"train_length", train_length},
          {"bits", bits},
          {"running_mean", running},
          {"mean", bits.empty() ? 0.0 : total / double(bits.size())},
          {"mean_within", within_count > 0 ? within / double(within_count) : 0.0},
          {"mean_past", past_count > 0 ? nlohmann::json(past / double(past_count)) : nullptr},
          {"text", text}};
}

}  // namespace pe::live
