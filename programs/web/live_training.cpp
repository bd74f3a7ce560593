#include "programs/web/live_training.hpp"

#include <nlohmann/json.hpp>

#include "chapters/08-length/lengths.hpp"
#include "lab/run.hpp"

namespace pe::live {

namespace {
// Where a model is saved so that it can be loaded again with other encoding options: the
// module's own file system in memory (nothing leaves the page).
constexpr const char* kCheckpoint = "/tmp/live_model.agt";
}  // namespace

LiveTraining::LiveTraining(const std::string& config_json)
    : trainer_(std::make_unique<Trainer>(config_from_json(config_json))) {}

nlohmann::json LiveTraining::advance(std::int64_t steps) {
  ag::check(steps >= 1, "advance", "needs at least one step, got ", steps);
  std::vector<double> losses;
  trainer_->on_step = [&](std::int64_t, double loss) { losses.push_back(loss); };
  nlohmann::json history = nlohmann::json::array();
  trainer_->train_until(trainer_->steps_done() + steps, [&](const HistoryPoint& h) {
    history.push_back({{"step", h.step},
                       {"train_loss", h.train_loss},
                       {"lr", h.lr},
                       {"eval_accuracy", h.eval_accuracy},
                       {"eval_loss", h.eval_loss}});
  });
  trainer_->on_step = nullptr;
  const std::int64_t total = trainer_->config().steps;
  return {{"step", trainer_->steps_done()},
          {"steps", total},
          {"losses", losses},
          {"history", history},
          {"seconds", trainer_->seconds()},
          {"done", trainer_->steps_done() >= total}};
}

nlohmann::json LiveTraining::attention(std::int64_t length) {
  ag::check(length >= trainer_->task().min_length() && length <= 256, "attention", "length ",
            length, " is outside ", trainer_->task().min_length(), " .. 256");
  const Batch sample = trainer_->task().held_out(1, length, trainer_->config().seed);
  std::vector<std::string> tokens;
  for (std::int64_t id : sample.inputs.values) tokens.push_back(trainer_->task().token_text(id));
  nlohmann::json panels = nlohmann::json::array();
  const auto weights = held_out_attention(*trainer_, length);  // per layer [1, H, T, T]
  for (std::size_t layer = 0; layer < weights.size(); ++layer) {
    const std::vector<double> w = weights[layer].to_vector();
    const std::int64_t H = weights[layer].size(1), T = weights[layer].size(2);
    for (std::int64_t h = 0; h < H; ++h)
      panels.push_back(
          {{"layer", layer + 1},
           {"head", h + 1},
           {"weights", std::vector<double>(w.begin() + h * T * T, w.begin() + (h + 1) * T * T)}});
  }
  return {{"length", length}, {"tokens", tokens}, {"panels", panels}};
}

nlohmann::json LiveTraining::evaluate_lengths(const nlohmann::json& request) {
  const auto lengths = request.at("lengths").get<std::vector<std::int64_t>>();
  const auto tokens = request.value("tokens", std::int64_t(4096));
  const auto options = request.value("options", std::map<std::string, std::string>{});
  for (std::int64_t length : lengths)
    ag::check(length >= 1 && length <= 1024, "evaluate", "length ", length,
              " is outside 1 .. 1024");
  // A fresh copy of the model with the options replaced, as `pe eval --option` loads one.
  trainer_->save(kCheckpoint);
  auto model = Trainer::resume(kCheckpoint, options);
  nlohmann::json rows = nlohmann::json::array();
  for (const LengthResult& r : evaluate_past_training(*model, lengths, tokens))
    rows.push_back({{"length", r.length},
                    {"ran", r.ran},
                    {"accuracy", r.accuracy},
                    {"loss", r.loss},
                    {"error", r.error}});
  return {{"lengths", rows}, {"options", options}};
}

nlohmann::json LiveTraining::inspect(std::int64_t length) {
  ag::check(length >= 1 && length <= 1024, "inspect", "length ", length, " is outside 1 .. 1024");
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [name, tensor] : trainer_->model().encoding->inspect(length))
    out[name] = {{"shape", tensor.shape()}, {"values", tensor.to_vector()}};
  return out;
}

}  // namespace pe::live
