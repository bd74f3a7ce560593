#include "chapters/11-todays-models/layer_types.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "chapters/01-attention/encoding_registry.hpp"

namespace pe {

using ag::Tensor;

namespace {

constexpr LayerKind kKinds[] = {LayerKind::local, LayerKind::global, LayerKind::chunked,
                                LayerKind::nope};

bool has_kind(const std::vector<LayerKind>& pattern, LayerKind kind) {
  return std::find(pattern.begin(), pattern.end(), kind) != pattern.end();
}

}  // namespace

LayerKind layer_kind_from(const std::string& name) {
  for (LayerKind kind : kKinds)
    if (layer_kind_name(kind) == name) return kind;
  throw ag::Error("hybrid: unknown layer kind '" + name +
                  "' (known: local, global, chunked, nope)");
}

std::string layer_kind_name(LayerKind kind) {
  switch (kind) {
    case LayerKind::local:
      return "local";
    case LayerKind::global:
      return "global";
    case LayerKind::chunked:
      return "chunked";
    case LayerKind::nope:
      return "nope";
  }
  return "?";
}

std::vector<LayerKind> layer_pattern_from(const std::string& pattern) {
  std::vector<LayerKind> kinds;
  std::size_t start = 0;
  while (true) {
    const std::size_t plus = pattern.find('+', start);
    const std::string kind = pattern.substr(start, plus - start);
    ag::check(!kind.empty(), "hybrid", "pattern '", pattern,
              "' has an empty layer kind: expected kinds joined by '+' (local+global)");
    kinds.push_back(layer_kind_from(kind));
    if (plus == std::string::npos) return kinds;
    start = plus + 1;
  }
}

std::string layer_pattern_name(const std::vector<LayerKind>& pattern) {
  std::string text;
  for (LayerKind kind : pattern) {
    if (!text.empty()) text += '+';
    text += layer_kind_name(kind);
  }
  return text;
}

TemperatureOn temperature_on_from(const std::string& name) {
  if (name == "nope") return TemperatureOn::nope;
  if (name == "all") return TemperatureOn::all;
  throw ag::Error("hybrid: temperature_on must be nope or all, got '" + name + "'");
}

std::string temperature_on_name(TemperatureOn on) {
  return on == TemperatureOn::nope ? "nope" : "all";
}

// [temperature]
double query_temperature(std::int64_t position, std::int64_t floor_scale, double attn_scale) {
  ag::check(position >= 0 && floor_scale >= 1 && attn_scale >= 0, "query_temperature",
            "expected a position >= 0, floor_scale >= 1 and attn_scale >= 0, got ", position, ", ",
            floor_scale, " and ", attn_scale);
  // tau(p) = 1 + attn_scale * ln(1 + floor((p + 1) / F)): whole-number division is the floor
  const std::int64_t steps = (position + 1) / floor_scale;
  return 1.0 + attn_scale * std::log1p(double(steps));
}
// [temperature]

void check_hybrid(const HybridOptions& o) {
  ag::check(!o.pattern.empty(), "hybrid", "the pattern has no layer kind");
  if (has_kind(o.pattern, LayerKind::local))
    ag::check(o.window >= 1, "hybrid", "a local layer needs window >= 1, got ", o.window);
  if (has_kind(o.pattern, LayerKind::chunked))
    ag::check(o.chunk >= 1, "hybrid", "a chunked layer needs chunk >= 1, got ", o.chunk);
  ag::check(o.window >= 0 && o.chunk >= 0, "hybrid", "window and chunk must not be negative, got ",
            o.window, " and ", o.chunk);
  ag::check(o.local_base > 1 && o.global_base > 1, "hybrid",
            "local_base and global_base must be greater than 1, got ", o.local_base, " and ",
            o.global_base);
  ag::check(o.temperature_floor >= 0, "hybrid", "temperature_floor must be 0 (none) or more, got ",
            o.temperature_floor);
  ag::check(o.temperature_scale >= 0 && std::isfinite(o.temperature_scale), "hybrid",
            "temperature_scale must be 0 or more, got ", o.temperature_scale);
  if (o.temperature_floor > 0 && o.temperature_on == TemperatureOn::nope)
    ag::check(has_kind(o.pattern, LayerKind::nope), "hybrid", "the temperature scales the ",
              "queries of nope layers, and pattern '", layer_pattern_name(o.pattern),
              "' has none (temperature_on=all scales every layer)");
}

LayerPlan layer_plan(const HybridOptions& o, std::int64_t layer) {
  check_hybrid(o);
  ag::check(layer >= 0, "hybrid", "a layer's index must not be negative, got ", layer);
  LayerPlan plan;
  plan.kind = o.pattern[static_cast<std::size_t>(layer) % o.pattern.size()];
  switch (plan.kind) {
    case LayerKind::local:
      plan.span.window = o.window;
      plan.base = o.local_base;
      break;
    case LayerKind::global:
      plan.base = o.global_base;
      break;
    case LayerKind::chunked:
      plan.span.chunk = o.chunk;
      plan.base = o.global_base;
      break;
    case LayerKind::nope:
      break;
  }
  if (o.temperature_floor > 0 &&
      (o.temperature_on == TemperatureOn::all || plan.kind == LayerKind::nope)) {
    plan.temperature_floor = o.temperature_floor;
    plan.temperature_scale = o.temperature_scale;
  }
  return plan;
}

HybridLayerPositions::HybridLayerPositions(std::int64_t head_width, LayerPlan plan) : plan_(plan) {
  ag::check(head_width > 0, "hybrid", "head width must be positive, got ", head_width);
  if (plan_.kind != LayerKind::nope) {
    RotaryOptions rope;
    rope.base = plan_.base;
    rope_ = std::make_shared<RotaryPositions>(head_width, rope);
  }
}

// [hybrid-rotate]
std::pair<Tensor, Tensor> HybridLayerPositions::rotate(const Tensor& q, const Tensor& k,
                                                       const Positions& positions) const {
  auto [q_out, k_out] = rope_ ? rope_->rotate(q, k, positions) : std::pair<Tensor, Tensor>{q, k};
  if (plan_.temperature_floor == 0) return {q_out, k_out};
  // q_i times tau(p_i) at the query's absolute position, so that a cached step scales as the
  // full pass does; k is left as it is (Llama 4 scales the queries only)
  ag::check(q.dim() == 4, "hybrid", "expected q [B, H, T, D], got ", ag::shape_string(q.shape()));
  const std::int64_t T = q.size(2);
  std::vector<double> tau(static_cast<std::size_t>(T));
  for (std::int64_t i = 0; i < T; ++i)
    tau[i] = query_temperature(positions.at(i), plan_.temperature_floor, plan_.temperature_scale);
  if (std::all_of(tau.begin(), tau.end(), [](double t) { return t == 1.0; }))
    return {q_out, k_out};  // every query below F - 1: the product would change nothing
  return {ag::mul(q_out, ag::from_vector(tau, {T, 1}, q.dtype())), k_out};
}
// [hybrid-rotate]

// [hybrid-bias]
Tensor HybridLayerPositions::bias(const Tensor& scores, const Tensor& q, const Tensor& k,
                                  const Positions& queries) const {
  (void)q, (void)k;  // the span depends on positions only
  if (plan_.span.window == 0 && plan_.span.chunk == 0) return scores;
  ag::check(scores.dim() == 4, "hybrid", "expected scores [B, H, Tq, Tk], got ",
            ag::shape_string(scores.shape()));
  const Tensor hidden =
      span_mask(scores.size(2), scores.size(3), queries, plan_.span, scores.dtype());
  return ag::masked_fill(scores, hidden, -std::numeric_limits<double>::infinity());
}
// [hybrid-bias]

HybridEncoding::HybridEncoding(std::int64_t head_width, std::int64_t layers, HybridOptions options)
    : head_width_(head_width), layers_(layers), options_(std::move(options)) {
  check_hybrid(options_);
  ag::check(head_width > 0 && layers > 0, "hybrid", "head width and layers must be positive, got ",
            head_width, " and ", layers);
  if (options_.pattern != std::vector<LayerKind>(options_.pattern.size(), LayerKind::nope))
    rotary_width(head_width, {});  // RoPE's layers need an even head width: refused now, not
                                   // when the decoder asks for the parts
}

std::shared_ptr<AttentionPositions> HybridEncoding::make_attention_part(ag::Rng& rng) const {
  return make_layer_part(rng, 0, 1);
}

std::shared_ptr<AttentionPositions> HybridEncoding::make_layer_part(ag::Rng& rng,
                                                                    std::int64_t layer,
                                                                    std::int64_t layers) const {
  (void)rng, (void)layers;  // no parameters; the pattern is cycled from layer 0
  return std::make_shared<HybridLayerPositions>(head_width_, layer_plan(options_, layer));
}

std::vector<std::pair<std::string, Tensor>> HybridEncoding::inspect(std::int64_t length) const {
  ag::check(length >= 0, "hybrid", "length must not be negative, got ", length);
  auto number = [](double value) { return ag::from_vector({value}, {1}, ag::Dtype::f64); };
  auto temperatures = [length](std::int64_t floor, double scale) {
    std::vector<double> tau(static_cast<std::size_t>(length), 1.0);
    if (floor > 0)
      for (std::int64_t p = 0; p < length; ++p) tau[p] = query_temperature(p, floor, scale);
    return ag::from_vector(tau, {length}, ag::Dtype::f64);
  };
  std::vector<std::pair<std::string, Tensor>> out;
  const auto shown = std::max<std::int64_t>(layers_, std::int64_t(options_.pattern.size()));
  for (std::int64_t i = 0; i < shown; ++i) {
    const LayerPlan plan = layer_plan(options_, i);
    const std::string layer = "layer" + std::to_string(i) + ".";
    out.emplace_back(layer + "kind", number(double(plan.kind)));
    out.emplace_back(layer + "window", number(double(plan.span.window)));
    out.emplace_back(layer + "chunk", number(double(plan.span.chunk)));
    out.emplace_back(layer + "base", number(plan.base));
    out.emplace_back(layer + "temperature",
                     temperatures(plan.temperature_floor, plan.temperature_scale));
  }
  out.emplace_back("temperature",
                   temperatures(options_.temperature_floor, options_.temperature_scale));
  return out;
}

namespace {

// [hybrid-options]
// The options of a spec, each checked; an option that no layer of the pattern uses is refused,
// so that a typing mistake (window for a pattern without a local layer) is not silently moot.
HybridOptions hybrid_options_from(const EncodingSpec& spec) {
  HybridOptions o;
  auto given = [&spec](const char* key) { return spec.options.count(key) > 0; };
  if (given("pattern")) o.pattern = layer_pattern_from(spec.options.at("pattern"));
  const bool local = has_kind(o.pattern, LayerKind::local),
             chunked = has_kind(o.pattern, LayerKind::chunked),
             global = has_kind(o.pattern, LayerKind::global);
  auto used_only_with = [&](const char* key, bool used, const char* which) {
    ag::check(!given(key) || used, "hybrid", "option ", key, " is for ", which, ", and pattern '",
              layer_pattern_name(o.pattern), "' has none");
  };
  used_only_with("window", local, "local layers");
  used_only_with("local_base", local, "local layers");
  used_only_with("chunk", chunked, "chunked layers");
  used_only_with("global_base", global || chunked, "global and chunked layers");
  ag::check(!local || given("window"), "hybrid", "a local layer needs option window (pattern '",
            layer_pattern_name(o.pattern), "')");
  ag::check(!chunked || given("chunk"), "hybrid", "a chunked layer needs option chunk (pattern '",
            layer_pattern_name(o.pattern), "')");
  o.window = integer_option(spec, "hybrid", "window", o.window, 1, kLargestTableOption);
  o.chunk = integer_option(spec, "hybrid", "chunk", o.chunk, 1, kLargestTableOption);
  o.local_base = number_option(spec, "hybrid", "local_base", o.local_base);
  o.global_base = number_option(spec, "hybrid", "global_base", o.global_base);
  o.temperature_floor = integer_option(spec, "hybrid", "temperature_floor", o.temperature_floor, 0,
                                       kLargestTableOption);
  const bool temperature = o.temperature_floor > 0;
  used_only_with("temperature_scale", temperature, "the temperature (temperature_floor > 0)");
  used_only_with("temperature_on", temperature, "the temperature (temperature_floor > 0)");
  o.temperature_scale = number_option(spec, "hybrid", "temperature_scale", o.temperature_scale);
  if (given("temperature_on"))
    o.temperature_on = temperature_on_from(spec.options.at("temperature_on"));
  check_hybrid(o);
  return o;
}
// [hybrid-options]

}  // namespace

void register_hybrid_encoding() {
  register_encoding({"hybrid",
                     "11",
                     "layers that differ (Gemma 3, Llama 4): a pattern of local (sliding "
                     "window), global, chunked RoPE and NoPE layers, cycled; a temperature on "
                     "NoPE layers' queries",
                     {"pattern", "window", "chunk", "local_base", "global_base",
                      "temperature_floor", "temperature_scale", "temperature_on"},
                     [](const EncodingSpec& spec, ag::Rng&) {
                       return std::make_shared<HybridEncoding>(head_width_of(spec, "hybrid"),
                                                               spec.model.layers,
                                                               hybrid_options_from(spec));
                     }});
}

}  // namespace pe
