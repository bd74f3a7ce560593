// Reaching past RoPE's training length after training: the same trained weights under one of
// chapter 8's scaling rules (linear interpolation, NTK-aware, dynamic NTK, YaRN), with or
// without a short fine-tune at the longer length.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "lab/trainer.hpp"

namespace pe {

/// The encoding options of a RoPE model that reaches `scale` times its training length
/// `train_length` by `method` ("none", "linear", "ntk", "dynamic", "yarn", "yarn-paper"): only
/// the options the rule reads. Dynamic gets no scale: with the default factor 1 its scale is
/// max(1, T / train_length) for the current length T.
std::map<std::string, std::string> rope_scaling_encoding_options(const std::string& method,
                                                                 double scale,
                                                                 std::int64_t train_length);

/// A trainer for `config` (a RoPE model under a scaling rule, and for a fine-tune the longer
/// length) whose model starts from the weights of a trained checkpoint (Trainer::load_weights).
/// The scaling rules change no parameter, so the weights of the model trained without one fit.
std::unique_ptr<Trainer> trainer_from_checkpoint(const TrainConfig& config,
                                                 const std::string& checkpoint);

}  // namespace pe
