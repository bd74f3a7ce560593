#include "lab/memory.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#if defined(__APPLE__)
#include <sys/sysctl.h>
#include <sys/types.h>
#elif defined(__unix__)
#include <unistd.h>
#endif

#include "ag/error.hpp"
#include "chapters/01-attention/encoding_registry.hpp"
#include "lab/trainer.hpp"

namespace pe {

namespace {

// An option as the encoding reads it, or its default when the value is not one the encoding
// takes: the encoding itself then says what is wrong, as it builds.
std::int64_t option_or_default(const TrainConfig& c, const char* key, std::int64_t fallback) {
  EncodingSpec spec;
  spec.options = c.encoding_options;
  try {
    return integer_option(spec, c.encoding, key, fallback, 1, kLargestTableOption);
  } catch (const ag::Error&) {
    return fallback;
  }
}

// What one layer holds at the peak, in float values, for B sequences of T tokens: when
// training, every activation the backward pass needs and the gradients it is making; when
// evaluating (no gradients), what lives at once while a layer runs. The coefficients are
// measured, not derived: ag's counter of live tensor bytes at the peak of a training step and
// of an evaluation, at lengths 512 to 4096 (lab/tests/test_memory_measured.cpp holds every
// encoding to 25% of it). What grows with T * T dominates there: plain attention holds about
// 7.4 [B, H, T, T] tensors in training (scores, mask, softmax, their gradients) and 2.3 when
// evaluating, plus a [T, T] mask.
struct LayerValues {
  double training = 0, evaluating = 0;
};

// The defaults of the encodings' options that size what they hold, written again here since
// the lab may not know the chapters that define them (fire.hpp, dynamic_position_bias.hpp).
// An encoding not named here holds only [B, T, C] tensors (sinusoidal, learned, RoPE, xPos,
// PoPE, the hybrid's local and global RoPE layers, and any encoding added later): an encoding
// that adds a [T, T] term of its own adds a line here, with its measurement in that test.
LayerValues encoding_values(const TrainConfig& c, double B, double T, double H, double D) {
  const double heads_scores = B * H * T * T, bias = H * T * T, pairs = T * T;
  const std::string& e = c.encoding;
  if (e == "shaw") {  // the key term; with -o pairwise=true the [T, T, D] tables as written
    EncodingSpec spec;
    spec.options = c.encoding_options;
    bool pairwise = false;
    try {
      pairwise = bool_option(spec, "shaw", "pairwise", false);
    } catch (const ag::Error&) {
      // the encoding itself refuses the value as it builds
    }
    if (pairwise) return {4 * heads_scores + 3 * pairs * D, 0.5 * heads_scores + pairs * D};
    return {3.2 * heads_scores, 1.5 * heads_scores};
  }
  // Transformer-XL's content-to-position and position terms, shifted into place (padding and
  // slicing copies); CoPE's gates, their running sums and the interpolated position logits.
  if (e == "xl") return {11 * heads_scores, 4.7 * heads_scores};
  if (e == "cope") return {11 * heads_scores, 2.6 * heads_scores};
  // An [H, T, T] bias from the distances (buckets, slopes), added to a new [B, H, T, T].
  if (e == "t5") return {heads_scores + 2 * bias, 0.5 * bias};
  if (e == "alibi") return {heads_scores + bias, 0.5 * bias};
  if (e == "fox") return {2 * heads_scores, 0.5 * heads_scores};  // the forget gates' sums
  if (e == "kerple") return {7 * bias, 2 * bias};  // its kernel of the distance, per head
  // FIRE runs its MLP at every (query, key): its input depends on the query, not on the
  // distance alone, so [T * T, width] hidden units (the linear layer and its ReLU).
  if (e == "fire") {
    const double width = double(option_or_default(c, "width", 32));
    return {pairs * (3 * width + 7), pairs * (width + 0.5)};
  }
  // The dynamic position bias runs its MLP once per distance, [T, width] per hidden layer
  // (linear, sigmoid, SiLU), then gathers and permutes an [H, T, T] bias.
  if (e == "dpb") {
    const double width =
        double(option_or_default(c, "width", std::max<std::int64_t>(1, c.model.width / 4)));
    const double depth = double(option_or_default(c, "depth", 2));
    const double mlp = T * 3 * width * depth;
    return {heads_scores + 2 * bias + 2 * mlp, 0.5 * bias + mlp};
  }
  return {};
}

double parameter_values(const TrainConfig& c, std::int64_t vocab) {
  const double C = double(c.model.width), F = double(c.model.ffn_width), L = double(c.model.layers);
  // Embedding, output head, and per layer four projections, the feed-forward and the norms;
  // a learned table of positions is at most longest * C more.
  return 2 * double(vocab) * C + L * (4 * C * C + 2 * C * F + 6 * C) + double(c.table_length()) * C;
}

}  // namespace

double estimated_bytes(const TrainConfig& c, std::int64_t vocab, std::int64_t eval_length) {
  const double kFloat = 4;  // the model trains in float32
  const double C = double(c.model.width), F = double(c.model.ffn_width), H = double(c.model.heads),
               L = double(c.model.layers), V = double(vocab);
  const double parameters = parameter_values(c, vocab);
  const bool training = eval_length <= 0;
  const double T = training ? double(c.length) : double(eval_length);
  const double B =
      training ? double(c.batch) : double(std::min<std::int64_t>(64, c.eval_sequences));
  // Per layer: about a dozen [B, T, C] tensors and three [B, T, F] (each with its gradient)
  // when training, four and one when evaluating, attention's [B, H, T, T] ones and a [T, T] mask,
  // and the encoding's own.
  const LayerValues encoding = encoding_values(c, B, T, H, C / H);
  const double width_terms = B * T * (12 * C + 3 * F), eval_width_terms = B * T * (4 * C + F);
  // logits, softmax and the gradient of the loss; evaluation also copies the logits out
  const double logits = 3 * B * T * V;
  // Training keeps every activation and its gradient; parameters, gradients, m and v.
  if (training)
    return kFloat * (4 * parameters + 2 * logits +
                     L * (2 * width_terms + 7.4 * B * H * T * T + T * T + encoding.training));
  return kFloat *
         (parameters + logits +
          L * (eval_width_terms + 2.3 * B * H * T * T + 0.4 * T * T + encoding.evaluating));
}

double estimated_generation_bytes(const TrainConfig& c, std::int64_t vocab,
                                  const GenerationPlan& plan) {
  const double kFloat = 4;
  TrainConfig one = c;
  one.eval_sequences = 1;  // generation decodes one text
  const std::int64_t longest = std::max<std::int64_t>(1, plan.prompt + plan.tokens - 1);
  if (!plan.cache) return estimated_bytes(one, vocab, longest);
  const double C = double(c.model.width), H = double(c.model.heads), L = double(c.model.layers);
  // The window cache reads the prompt a token at a time too, and keeps at most S + W tokens;
  // the plain cache reads the prompt in one pass and keeps every token.
  const bool windowed = plan.window > 0;
  const double kept = double(windowed ? std::min(longest, plan.sinks + plan.window) : longest);
  const double first_pass =
      windowed ? kFloat * parameter_values(c, vocab) : estimated_bytes(one, vocab, plan.prompt);
  // Per layer and kept token: its key and value (C each), the encoding's slot (a value per
  // head at most: FoX's running sums) and, for the window cache, its stream position.
  const double cache = L * kept * (2 * C + H + 1);
  // While a layer appends (or evicts), its old and new keys and values live at once; one
  // step's activations over the kept keys: scores and weights [H, 1, n], and keys rotated or
  // encoded afresh ([n, C]: PoPE's, RoPE's turn in cache mode, Transformer-XL's R).
  const double step = 2 * kept * C + kept * (C + 8 * H) + double(vocab) * 4;
  return first_pass + kFloat * (cache + step);
}

namespace {

// PE_MEMORY_LIMIT_BYTES as the user wrote it: digits only, so that a typo is not read as 0.
double limit_from_environment(const char* text) {
  const std::string value(text);
  double bytes = 0;
  bool digits = !value.empty();
  for (char c : value) {
    if (c < '0' || c > '9') digits = false;
    bytes = bytes * 10 + (c - '0');
  }
  if (!digits || bytes <= 0)
    throw ag::Error("PE_MEMORY_LIMIT_BYTES: expected a positive whole number of bytes, got '" +
                    value + "'");
  return bytes;
}

}  // namespace

AvailableMemory available_memory() {
  if (const char* limit = std::getenv("PE_MEMORY_LIMIT_BYTES"))
    return {limit_from_environment(limit), "PE_MEMORY_LIMIT_BYTES"};
  {
    std::ifstream meminfo("/proc/meminfo");  // Linux and WSL
    std::string key, unit;
    double kilobytes = 0;
    while (meminfo >> key >> kilobytes >> unit)
      if (key == "MemAvailable:") return {kilobytes * 1024, "available memory"};
  }
#if defined(__APPLE__)
  std::uint64_t total = 0;
  std::size_t size = sizeof total;
  if (sysctlbyname("hw.memsize", &total, &size, nullptr, 0) == 0 && total > 0)
    return {double(total), "total physical memory (macOS does not say what is free)"};
#elif defined(_SC_PHYS_PAGES) && defined(_SC_PAGESIZE)
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0)
    return {double(pages) * double(page), "total physical memory (no /proc/meminfo here)"};
#endif
  return {0, ""};
}

namespace {
std::string gigabytes(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g GB", bytes / 1e9);
  return text;
}
}  // namespace

void require_memory(double needed, const std::string& what) {
  const AvailableMemory memory = available_memory();
  if (memory.bytes <= 0) {
    static bool said = false;  // once per process: evaluation checks every length
    if (!said)
      std::fprintf(stderr,
                   "memory: could not read this machine's memory; the estimate of %s "
                   "is not checked\n",
                   gigabytes(needed).c_str());
    said = true;
    return;
  }
  if (needed <= memory.bytes) return;
  throw ag::Error("memory: " + what + " needs about " + gigabytes(needed) + " but the " +
                  memory.source + " is " + gigabytes(memory.bytes) +
                  " (a shorter length, a smaller batch or model would fit)");
}

void check_memory(const TrainConfig& config, std::int64_t vocab, std::int64_t eval_length) {
  require_memory(estimated_bytes(config, vocab, eval_length),
                 eval_length > 0 ? "evaluating at length " + std::to_string(eval_length)
                                 : std::string("training this configuration"));
}

double estimated_heatmap_bytes(const TrainConfig& config, std::int64_t vocab, std::int64_t length) {
  TrainConfig one = config;
  one.eval_sequences = 1;  // the figure shows one sequence
  const double T = double(length);
  const double weights = double(config.model.layers) * double(config.model.heads) * T * T;
  // a float in the model, a double in the panel, about 12 characters in the script
  return estimated_bytes(one, vocab, length) + weights * (4 + 8 + 12);
}

double estimated_inspect_bytes(const std::string& name, const EncodingSpec& spec,
                               std::int64_t length, double extra_values) {
  const double kPerValue = 8 + 16 + 24;  // a double, a JSON number, its text
  double values = extra_values;
  try {
    EncodingSpec small = spec;
    small.max_length = 16;
    ag::Rng rng(0);
    const auto encoding = make_encoding(name, small, rng);
    const auto at8 = encoding->inspect(8), at16 = encoding->inspect(16);
    for (std::size_t t = 0; t < at8.size() && t < at16.size(); ++t) {
      const ag::Shape &a = at8[t].second.shape(), &b = at16[t].second.shape();
      if (a.size() != b.size()) continue;
      double count = 1;  // an axis that grows with the length (T, 2T - 1) grows on linearly
      for (std::size_t axis = 0; axis < b.size(); ++axis)
        count *= double(a[axis]) + double(b[axis] - a[axis]) * double(length - 8) / 8.0;
      values += std::max(count, 0.0);
    }
  } catch (const ag::Error&) {
    // nothing to estimate from: the real encoding reports what is wrong
  }
  return values * kPerValue;
}

}  // namespace pe
