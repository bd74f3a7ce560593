// A model's config.json, read and explained: the fields of a Hugging Face config that set how
// its layers handle position (rope_theta, head_dim, rope_scaling or rope_parameters,
// layer_types, sliding windows, NoPE layers, attention chunks, a temperature), gathered into
// one HfRopeParameters per kind of layer, and what those parameters do to each plane of the
// rotation: kept, interpolated, blended, rescaled or stopped. Fields unrelated to position are
// ignored; a field that is malformed, missing where its rope type needs it, or contradicts
// another is an ag::Error in one line naming it.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "chapters/11-todays-models/hf_rope.hpp"

namespace pe {

/// One kind of layer of a model, as its config.json sets position handling.
struct HfLayerType {
  /// "all" (every layer alike), or the config's layer type ("full_attention",
  /// "sliding_attention", ...), or "rope" and "nope" for Llama 4's two kinds (the layer type
  /// with "/rope" or "/nope" added when a layer_types entry holds both kinds).
  std::string name;
  std::vector<std::int64_t> layers;  ///< the layers of this kind, 0-based, ascending
  /// false: no rotation at all (a NoPE layer, or a "linear_attention" layer, which has no
  /// attention scores to rotate)
  bool rotary = true;
  HfRopeParameters rope;         ///< the rotation's parameters, when rotary
  std::int64_t window = 0;       ///< sliding window in tokens; 0: full attention
  std::int64_t chunk = 0;        ///< attention chunk size in tokens; 0: none
  double temperature_floor = 0;  ///< Llama 4's floor_scale (0: no temperature)
  double temperature_scale = 0;  ///< Llama 4's attn_scale
};

/// A model's position handling: its layers, grouped by kind.
struct HfModelRope {
  /// the config's model_type (its text_config's in a multimodal config: "gemma3_text"), or ""
  std::string model_type;
  std::int64_t layers = 0;         ///< num_hidden_layers
  std::vector<HfLayerType> types;  ///< every layer in exactly one, in order of first layer
};

/// The position handling of a parsed config.json. An ag::Error in one line naming the field
/// (e.g. "config.json: rope_scaling.low_freq_factor is missing (llama3 needs it)") when a
/// field has the wrong JSON type, a rope type lacks a field it needs, or fields contradict
/// each other (see hf_config.cpp for the list).
HfModelRope read_hf_config(const nlohmann::json& config);

/// read_hf_config of a config's text; `source` (a file name) begins every error message,
/// including JSON syntax errors.
HfModelRope read_hf_config_text(const std::string& text, const std::string& source);

/// read_hf_config of the file at `path`; a missing or unreadable file is an ag::Error naming it.
HfModelRope read_hf_config_file(const std::string& path);

/// How a plane's frequency relates to its unscaled (default) one, decided from the two values.
enum class HfBand {
  kept,          ///< unchanged
  interpolated,  ///< divided by the whole scaling factor
  blended,       ///< between the two: divided by a number in (1, factor)
  rescaled,      ///< divided by some other number (longrope's per-plane factors)
  zero           ///< frequency 0: the plane never turns (proportional's tail)
};

/// "kept", "interpolated", "blended", "rescaled" or "zero".
std::string hf_band_name(HfBand band);

/// The band of a plane whose frequency is `inv_freq` and would be `default_inv_freq` unscaled,
/// under a scaling `factor` (explain_hf_rope passes the layer type's factor, 1 when it has
/// none, and for dynamic the scale in force). With the divisor r = default / inv_freq, compared
/// with a relative tolerance of 1e-9 (both are computed in double from the same formulas, so a
/// kept or fully divided plane matches to rounding): r = 1 is kept, r = factor (> 1) is
/// interpolated, 1 < r < factor is blended, any other r is rescaled (longrope's per-plane
/// factors, a plane turned faster); inv_freq = 0 is zero.
HfBand hf_band(double inv_freq, double default_inv_freq, double factor);

/// The explanation of a model's position handling as JSON: {"model_type", "layers",
/// "seq_len", "layer_types": [...]}, per layer type its "name", "layers", "count", "rotary",
/// "window", "chunk" (null when none) and "temperature" (null, or its floor_scale, attn_scale,
/// formula and, for a length, its value at the last position); for a rotary type also
/// "rope_type", "head_dim", "rotated_width", "rope_theta", "partial_rotary_factor", "factor",
/// "scale" (hf_rope_scale: the scale in force), "original_context" (L0: the original
/// max_position_embeddings, else max_position_embeddings; "context_from" says which),
/// "attention_factor", longrope's "longrope_factors" (which list is in force), DeepSeek's
/// "softmax_scale_factor" (its attention multiplies the softmax scale by
/// get_mscale(s, mscale_all_dim)^2), a count per band in "bands", and "planes": per plane i its
/// inv_freq, default_inv_freq (plain RoPE of the same heads), wavelength 2 pi / inv_freq and
/// wavelength / L0 (null for a zero frequency or an unknown L0) and band (hf_band). seq_len is
/// the length of the pass (dynamic and longrope depend on it; 0: at initialisation).
nlohmann::json explain_hf_rope(const HfModelRope& model, std::int64_t seq_len = 0);

/// The same explanation as a short plain-text table for a terminal: one block per layer type,
/// one line per band (its planes, their wavelengths, what happens to them), not one per plane.
std::string hf_rope_table(const HfModelRope& model, std::int64_t seq_len = 0);

}  // namespace pe
