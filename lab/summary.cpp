#include "lab/summary.hpp"

namespace pe {

nlohmann::json& experiment_summary() {
  static nlohmann::json summary = nlohmann::json::object();
  return summary;
}

void record_summary_value(const std::string& name, double value) {
  experiment_summary()["values"][name] = value;
}

void record_summary_run(const std::string& name, const FinishedRun& run, const Trainer* trainer,
                        const AttentionAverages* attention) {
  const TrainConfig& c = run.config;
  const Evaluation& e = run.summary.final.at(c.length);
  nlohmann::json entry = {{"encoding", c.encoding},    {"task", c.task},
                          {"layers", c.model.layers},  {"heads", c.model.heads},
                          {"steps", c.steps},          {"seed", c.seed},
                          {"accuracy", e.accuracy},    {"loss", e.loss},
                          {"scored_tokens", e.scored}, {"train_seconds", run.summary.train_seconds},
                          {"reused", run.reused},      {"line", result_line(run)}};
  if (trainer) {
    nlohmann::json history = nlohmann::json::array();  // [step, held-out accuracy]
    for (const HistoryPoint& h : trainer->history()) history.push_back({h.step, h.eval_accuracy});
    entry["history"] = history;
  }
  if (attention) {
    entry["by_offset"] = attention->by_offset;  // [layer][head][r]
    entry["by_key"] = attention->by_key;        // [layer][head][j]
  }
  experiment_summary()["runs"][name] = entry;
}

}  // namespace pe
