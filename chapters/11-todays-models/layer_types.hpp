// Layers that differ: today's models choose how each layer handles position. Gemma 3 alternates
// five sliding-window layers (RoPE base 1e4, window 1024) with one global layer (base 1e6);
// Llama 4 leaves every fourth layer without RoPE (NoPE, full attention, its queries multiplied
// by a temperature that grows with the position) and lets its RoPE layers attend only within
// chunks of 8192 tokens. The encoding "hybrid" builds any such pattern from four layer kinds,
// each layer's part made by chapter 1's make_layer_part, RoPE from chapter 5's RotaryPositions
// and the windows and chunks from chapter 1's span_mask.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "chapters/01-attention/attention.hpp"
#include "chapters/05-rope/rope.hpp"

namespace pe {

/// What one layer of a hybrid model does with positions.
enum class LayerKind {
  local,    ///< RoPE at local_base, attention within a sliding window (Gemma's local layers)
  global,   ///< RoPE at global_base, full causal attention (Gemma's global layers)
  chunked,  ///< RoPE at global_base, attention within the query's chunk (Llama 4's RoPE layers)
  nope      ///< no rotation, full causal attention (Llama 4's every fourth layer)
};

/// "local", "global", "chunked" or "nope"; anything else is an ag::Error listing them.
LayerKind layer_kind_from(const std::string& name);
/// The name layer_kind_from accepts for `kind`.
std::string layer_kind_name(LayerKind kind);
/// Layer kinds joined by '+' ("local+local+global"), cycled over a model's layers: layer i has
/// kind pattern[i % pattern.size()]. An empty pattern, an empty kind ("local++global") or an
/// unknown one is an ag::Error.
std::vector<LayerKind> layer_pattern_from(const std::string& pattern);
/// The pattern's text, kinds joined by '+': the inverse of layer_pattern_from.
std::string layer_pattern_name(const std::vector<LayerKind>& pattern);

/// Which layers' queries the temperature multiplies.
enum class TemperatureOn {
  nope,  ///< the NoPE layers only, as Llama 4 does
  all    ///< every layer: the log-n style scaling alone, without NoPE's reason for it
};

/// "nope" or "all"; anything else is an ag::Error listing them.
TemperatureOn temperature_on_from(const std::string& name);
/// The name temperature_on_from accepts for `on`.
std::string temperature_on_name(TemperatureOn on);

/// Llama 4's attention temperature for a query at absolute position p (transformers'
/// modeling_llama4.py, Llama4TextAttention.forward: log1p(floor((cache_position + 1) /
/// floor_scale)) * attn_scale + 1):
///   tau(p) = 1 + attn_scale * ln(1 + floor((p + 1) / floor_scale)),
/// exactly 1 for p < floor_scale - 1, then growing by steps every floor_scale positions.
/// floor_scale >= 1, attn_scale >= 0 and p >= 0, else an ag::Error.
double query_temperature(std::int64_t position, std::int64_t floor_scale, double attn_scale);

/// The options of `pe train --encoding hybrid`, as its factory reads them.
struct HybridOptions {
  /// The layer kinds, cycled over the layers. The default is Llama 4's pattern at lengths
  /// below its chunk of 8192 tokens: three RoPE layers with full attention, then a NoPE layer.
  std::vector<LayerKind> pattern = {LayerKind::global, LayerKind::global, LayerKind::global,
                                    LayerKind::nope};
  std::int64_t window = 0;     ///< the local layers' window W: query i sees keys i-W+1 .. i
  std::int64_t chunk = 0;      ///< the chunked layers' chunk: query i sees its chunk's keys
  double local_base = 10000;   ///< RoPE's base in the local layers (Gemma 3: 1e4)
  double global_base = 10000;  ///< RoPE's base in the global and chunked layers (Gemma 3: 1e6)
  std::int64_t temperature_floor = 0;  ///< Llama 4's floor_scale F; 0: no temperature
  double temperature_scale = 0.1;      ///< Llama 4's attn_scale
  TemperatureOn temperature_on = TemperatureOn::nope;  ///< which layers' queries it scales
};

/// An ag::Error naming the first bad value of `options`: a pattern that is empty, a local
/// layer without a window >= 1, a chunked layer without a chunk >= 1, a base not above 1, a
/// negative temperature_floor or temperature_scale, or a temperature on NoPE layers that the
/// pattern does not have.
void check_hybrid(const HybridOptions& options);

/// One layer of a hybrid model, as its part will act.
struct LayerPlan {
  LayerKind kind = LayerKind::nope;    ///< pattern[layer % pattern.size()]
  AttentionSpan span;                  ///< the window (local) or the chunk (chunked); else none
  double base = 0;                     ///< RoPE's base; 0: no rotation (nope)
  std::int64_t temperature_floor = 0;  ///< F of the queries' temperature; 0: none here
  double temperature_scale = 0;        ///< attn_scale of the queries' temperature
};

/// Layer `layer` (0, 1, ...) of a model built with `options` (checked first).
LayerPlan layer_plan(const HybridOptions& options, std::int64_t layer);

/// One layer's part: RoPE (chapter 5's RotaryPositions) unless the layer is NoPE, then the
/// temperature on q, through the rotate hook; the window or chunk, through the bias hook.
class HybridLayerPositions : public AttentionPositions {
 public:
  /// head_width D, and the plan of the layer (its RoPE on the whole head, adjacent pairs).
  HybridLayerPositions(std::int64_t head_width, LayerPlan plan);
  /// q, k [B, H, T, D] at `positions`: both rotated by RoPE at the layer's base (unless NoPE),
  /// then q times tau(p) at each query's absolute position p where the layer has a
  /// temperature (k unchanged).  -> [B, H, T, D] each
  std::pair<ag::Tensor, ag::Tensor> rotate(const ag::Tensor& q, const ag::Tensor& k,
                                           const Positions& positions) const override;
  /// scores [B, H, Tq, Tk] with -infinity where span_mask hides the key (outside the window,
  /// or in another chunk); unchanged for global and NoPE layers. Every query keeps itself, so
  /// no row is all -infinity.
  ag::Tensor bias(const ag::Tensor& scores, const ag::Tensor& q, const ag::Tensor& k,
                  const Positions& queries) const override;
  const LayerPlan& plan() const { return plan_; }  ///< as constructed

 private:
  LayerPlan plan_;
  std::shared_ptr<RotaryPositions> rope_;  // null for a NoPE layer
};

/// Layers that differ: each layer's part follows the pattern's kind for that layer.
class HybridEncoding : public PositionalEncoding {
 public:
  /// head_width D, the model's number of layers L (inspect shows them), the options as
  /// check_hybrid checks them.
  HybridEncoding(std::int64_t head_width, std::int64_t layers, HybridOptions options);
  std::string name() const override { return "hybrid"; }
  /// Layer 0's part (a caller that asks without a layer, as `pe inspect --vector` does).
  std::shared_ptr<AttentionPositions> make_attention_part(ag::Rng& rng) const override;
  /// A HybridLayerPositions with layer_plan(options, layer); `layers` is not needed, since the
  /// pattern is cycled from layer 0.
  std::shared_ptr<AttentionPositions> make_layer_part(ag::Rng& rng, std::int64_t layer,
                                                      std::int64_t layers) const override;
  /// For each layer i of the model (at least one cycle of the pattern): "layer<i>.kind" [1]
  /// (0 local, 1 global, 2 chunked, 3 nope), "layer<i>.window" [1] and "layer<i>.chunk" [1]
  /// (0: none), "layer<i>.base" [1] (0: no rotation), "layer<i>.temperature" [length]: what
  /// the layer multiplies the query at each position 0 .. length-1 by (1 without a
  /// temperature); and "temperature" [length]: tau(p) itself (1 everywhere when
  /// temperature_floor is 0).
  std::vector<std::pair<std::string, ag::Tensor>> inspect(std::int64_t length) const override;

  const HybridOptions& options() const { return options_; }  ///< as constructed
  std::int64_t layers() const { return layers_; }            ///< L

 private:
  std::int64_t head_width_, layers_;
  HybridOptions options_;
};

/// Adds "hybrid" (options pattern, window, chunk, local_base, global_base, temperature_floor,
/// temperature_scale, temperature_on) to the registry. An option that no layer of the pattern
/// uses (a window without a local layer, a temperature_scale without temperature_floor) is an
/// error, as is a missing one that a layer needs.
void register_hybrid_encoding();

}  // namespace pe
