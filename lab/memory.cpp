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

// Chapter 9's MLPs of the distance, per layer (the bias hook runs in every layer, even with
// one function shared by all of them). The defaults are the chapter's (fire.hpp,
// dynamic_position_bias.hpp), written again here since the lab may not know chapter 9.
// FIRE runs f at every (query, key): its input depends on the query, not on the distance
// alone, so [T * T, width] hidden units (the linear layer and its ReLU), [T * T, H] out and
// about eight [T, T] tensors for the normalised distance. The dynamic position bias runs f
// once per distance, [T, width] per hidden layer (linear, sigmoid, SiLU), then gathers
// [T, T, H] and permutes it. Both add the [H, T, T] bias to a new [B, H, T, T].
double distance_mlp_values(const TrainConfig& c, double B, double T, double H) {
  if (c.encoding == "fire") {
    const double width = double(option_or_default(c, "width", 32));
    return T * T * (2 * width + 3 * H + 8) + B * H * T * T;
  }
  if (c.encoding == "dpb") {
    const double width =
        double(option_or_default(c, "width", std::max<std::int64_t>(1, c.model.width / 4)));
    const double depth = double(option_or_default(c, "depth", 2));
    return T * (3 * width * depth + H) + 2 * H * T * T + B * H * T * T;
  }
  return 0;
}

}  // namespace

double estimated_bytes(const TrainConfig& c, std::int64_t vocab, std::int64_t eval_length) {
  const double kFloat = 4;  // the model trains in float32
  const double C = double(c.model.width), F = double(c.model.ffn_width), H = double(c.model.heads),
               L = double(c.model.layers), V = double(vocab);
  const double D = C / H;
  const double longest = double(c.table_length());
  // Embedding, output head, and per layer four projections, the feed-forward and the norms;
  // a learned table of positions is at most longest * C more.
  const double parameters = 2 * V * C + L * (4 * C * C + 2 * C * F + 6 * C) + longest * C;
  const bool training = eval_length <= 0;
  const double T = training ? double(c.length) : double(eval_length);
  const double B =
      training ? double(c.batch) : double(std::min<std::int64_t>(64, c.eval_sequences));
  // Per layer: about a dozen [B, T, C] tensors, three [B, T, F], and four [B, H, T, T] (scores,
  // mask, softmax, weights). Shaw adds a score-sized key term and its gradient, and with
  // -o pairwise=true two [T, T, D] tensors and their gradients on top; FIRE and the dynamic
  // position bias their MLP's activations (distance_mlp_values).
  double per_layer = B * T * (12 * C + 3 * F) + 4 * B * H * T * T + distance_mlp_values(c, B, T, H);
  if (c.encoding == "shaw") {
    EncodingSpec spec;  // read the option as the encoding will
    spec.options = c.encoding_options;
    const bool builds_pairs = bool_option(spec, "shaw", "pairwise", false);
    per_layer += 2 * B * H * T * T + (builds_pairs ? 2 * T * T * D * 2 : 0);
  }
  const double activations = L * per_layer + 3 * B * T * V;  // logits, softmax, gradient
  // Training keeps every activation and its gradient; parameters, gradients, m and v.
  if (training) return kFloat * (4 * parameters + 2 * activations);
  return kFloat * (parameters + activations);
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
