// Chapter 12's live figure: a character model trained in the page (live_training) reads a long
// text one character at a time through chapter 12's window cache, S sinks and a window of W,
// in either position mode, and the figure draws the loss of every prediction as the stream goes
// far past the length the model was trained at: the collapse of a window without sinks, and
// the recovery that the first tokens bring back when the model learned to use them as sinks
// (StreamingLLM).
#pragma once
#include <nlohmann/json_fwd.hpp>
#include <string_view>

#include "lab/trainer.hpp"

namespace pe::live {

/// Where the module's file system holds the character model's text: the charlm task's default
/// corpus, the same path as on a Debian system, so that the page's TrainConfig is exactly the
/// one `pe train --task charlm` runs natively.
inline constexpr const char* kStreamCorpusPath = "/usr/share/common-licenses/GPL-3";

/// The text written at kStreamCorpusPath in the module, compiled in by
/// programs/web/CMakeLists.txt from the build machine's copy (wasm build only; bindings.cpp
/// writes it there as the module starts).
std::string_view shipped_corpus();

/// request {"sinks": S, "window": W (1 .. 4096), "positions": "cache" or "original",
///          "length": the stream's characters (2 .. 4096), "seed": which held-out stretch}
/// -> {"sinks", "window", "positions", "length", "train_length",
///     "bits": [length - 1: -log2 p(next | the cache), chapter 12's stream_bits],
///     "running_mean": [the mean of bits[0..t] for each t],
///     "mean", "mean_within": the mean over the predictions at t < train_length,
///     "mean_past": the mean over t >= train_length (null if none),
///     "text": [the stream's characters, as the task spells them]}.
/// A request outside these ranges, or options check_window_options refuses, is an ag::Error.
nlohmann::json stream_losses(Trainer& trainer, const nlohmann::json& request);

}  // namespace pe::live
