// One training run on a live page: the experiment bench's Trainer, driven a slice at a time
// from a Web Worker so that the page can draw the curve, the progress bar and the attention
// between slices, and stop the run between two of them.
#pragma once
#include <cstdint>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "lab/trainer.hpp"

namespace pe::live {

class LiveTraining {
 public:
  /// config: a TrainConfig as JSON (the "config" of a run.json), checked by config_from_json.
  explicit LiveTraining(const std::string& config_json);

  /// Trains up to `steps` more steps (Trainer::train_until, so the slices make exactly the run
  /// `pe train` makes) -> {"step", "steps", "losses" [one per step of this slice], "history"
  /// [the evaluations of this slice], "seconds", "done"}.
  nlohmann::json advance(std::int64_t steps);

  /// The attention of every layer and head on the first held-out sequence of `length` tokens
  /// (what `pe heatmap` draws) -> {"length", "tokens", "panels": [{"layer", "head", "weights"
  /// [length * length, row = query]}]}.
  nlohmann::json attention(std::int64_t length);

  /// The model as trained so far at each of `lengths` (chapter 8's evaluate_past_training on
  /// about `tokens` held-out tokens per length), with the encoding's options replaced by
  /// `options` (RoPE's scaling rules, say) as `pe eval --option` does ->
  /// {"lengths": [{"length", "ran", "accuracy", "loss", "error"}], "options"}.
  nlohmann::json evaluate_lengths(const nlohmann::json& request);

  /// The trained encoding's own quantities at `length` (its inspect(): a learned table, T5's
  /// learned bias, ...) -> {name: {"shape", "values"}}.
  nlohmann::json inspect(std::int64_t length);

  /// The run itself, for a figure that reads its model in its own way (chapter 12's stream).
  Trainer& trainer() { return *trainer_; }

 private:
  std::unique_ptr<Trainer> trainer_;
};

}  // namespace pe::live
