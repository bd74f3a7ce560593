// Chapter 12's plan: the language models its streaming experiment trains (chapter 8's bench
// model on the fortunes, with and without learned sink logits), the ways it reads a stream 50
// times the training length through a window cache, and where each run lives. In a library of
// its own, so that the tests check what the experiment trains without training it.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "chapters/12-inference/window_cache.hpp"
#include "lab/run.hpp"
#include "lab/trainer.hpp"

namespace pe::ch12 {

// [stream-plan]
/// The encodings the experiment streams through: a rotation, a bias by distance and nothing.
inline const std::vector<std::string> kEncodings = {"rope", "alibi", "none"};
/// Each stream is 50 times the training length (32), read one character at a time.
constexpr std::int64_t kStreamLength = 1600;
/// Streams of held-out text per model (consecutive pieces of the held-out fortunes).
constexpr std::int64_t kStreams = 2;
/// StreamingLLM keeps 4 sink tokens; the cache holds as many tokens as a training sequence.
constexpr std::int64_t kSinks = 4;
constexpr std::int64_t kCacheSize = 32;

/// One way of reading a stream: which model (with learned sink logits or not) and the cache.
struct Reading {
  std::string name;      ///< the row's name in the table and the figure's legend
  bool learned_sinks;    ///< read with the model trained with one sink logit per head
  WindowOptions window;  ///< what the cache keeps and where its keys sit
};
inline const std::vector<Reading> kReadings = {
    {"everything kept", false, {0, 0, StreamPositions::cache}},
    {"window 32", false, {0, kCacheSize, StreamPositions::cache}},
    {"window 32, original positions", false, {0, kCacheSize, StreamPositions::original}},
    {"4 sinks + window 28", false, {kSinks, kCacheSize - kSinks, StreamPositions::cache}},
    {"4 sinks + window 28, original positions",
     false,
     {kSinks, kCacheSize - kSinks, StreamPositions::original}},
    {"sink logits, everything kept", true, {0, 0, StreamPositions::cache}},
    {"sink logits, window 32", true, {0, kCacheSize, StreamPositions::cache}},
};
/// The table's columns: mean bits over these stretches of the stream, [begin, end).
struct Stretch {
  std::int64_t begin;  ///< the first position
  std::int64_t end;    ///< one past the last
};
inline const std::vector<Stretch> kStretches = {{1, 32}, {32, 400}, {400, kStreamLength}};
/// The figure's curves are means over windows of this many positions.
constexpr std::int64_t kSmoothing = 32;
// [stream-plan]

/// Chapter 8's two-layer model of `encoding` on the fortunes (length_config), with one sink
/// logit per head when `learned_sinks`.
TrainConfig stream_config(const std::string& encoding, bool learned_sinks, std::int64_t steps,
                          std::uint64_t seed);

/// The model's name in run folders and the summary: "rope", "rope-sinks".
std::string model_name(const std::string& encoding, bool learned_sinks);

/// One training: the encoding, whether it has sink logits, the run.
struct StreamRun {
  std::string encoding;  ///< one of kEncodings
  bool learned_sinks;    ///< trained with sink logits
  PlannedRun run;        ///< `<out>/runs/<model_name>-s<seed>`
};

/// Every training, seed by seed, each seed the encodings of kEncodings, each without and
/// with sink logits. The runs read `corpus` and have `vocabulary` tokens.
std::vector<StreamRun> plan_stream_runs(const std::string& out, std::uint64_t first_seed,
                                        std::int64_t seeds, std::int64_t steps,
                                        const std::string& corpus, std::int64_t vocabulary);

/// The mean of bits[begin .. end) (bits[t] scores the prediction of token t+1, so stretch
/// [1, 32) of positions is bits[0 .. 31)); an empty or out-of-range stretch is an ag::Error.
double stretch_mean(const std::vector<double>& bits, const Stretch& stretch);

/// bits averaged over consecutive windows of `width` predictions: x is each window's middle
/// position in the stream, y its mean. The last, shorter window is dropped.
std::pair<std::vector<double>, std::vector<double>> smoothed(const std::vector<double>& bits,
                                                             std::int64_t width);

}  // namespace pe::ch12
