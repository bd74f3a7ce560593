// Hugging Face's rope types, exactly: the inverse frequencies and attention factor that
// transformers' modeling_rope_utils.py computes (its _compute_*_parameters functions) for the
// rope types default, linear, dynamic, yarn, longrope, llama3 and proportional, from one layer
// type's rope parameters. Computed in double from the published formulas (transformers rounds
// to float32; the chapter says where that matters). Chapter 8's rules are the same ideas
// written in the papers' letters; this file speaks the names a config.json uses.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace pe {

/// A rope_type of Hugging Face's configs ("default" is the plain RoPE of chapter 5).
enum class HfRopeType { standard, linear, dynamic, yarn, longrope, llama3, proportional };

/// "default", "linear", "dynamic", "yarn", "longrope", "llama3" or "proportional"; anything
/// else is an ag::Error listing them.
HfRopeType hf_rope_type_from(const std::string& name);
/// The config's name of `type`: the inverse of hf_rope_type_from.
std::string hf_rope_type_name(HfRopeType type);

/// One layer type's rope parameters, under the names a config.json gives them. A field the
/// type does not use is left empty; check_hf_rope says which ones a type needs.
struct HfRopeParameters {
  HfRopeType type = HfRopeType::standard;  ///< rope_type
  double rope_theta = 10000;               ///< the base
  std::int64_t head_dim = 0;               ///< head_dim, or hidden_size / num_attention_heads
  /// The fraction of head_dim that turns: dim = int(head_dim * it) for every type but
  /// proportional, whose planes keep exponents over the whole head_dim (see there).
  double partial_rotary_factor = 1;
  std::int64_t max_position_embeddings = 0;  ///< the config's (dynamic's L; longrope's default)
  /// L0: yarn, longrope, llama3 (max_position_embeddings stands in when absent, as
  /// transformers' standardize_rope_params fills it in)
  std::optional<std::int64_t> original_max_position_embeddings;
  /// s: linear, dynamic, llama3; yarn and longrope take max_position_embeddings / L0 when
  /// absent, proportional 1
  std::optional<double> factor;
  std::optional<double> attention_factor;  ///< yarn, longrope: given instead of computed
  std::optional<double> beta_fast;         ///< yarn: 32 when absent
  std::optional<double> beta_slow;         ///< yarn: 1 when absent
  std::optional<double> mscale;            ///< yarn (DeepSeek): the numerator's slope factor
  std::optional<double> mscale_all_dim;    ///< yarn (DeepSeek): the denominator's
  bool truncate = true;                    ///< yarn: the ramp's ends rounded to whole planes
  std::optional<double> low_freq_factor;   ///< llama3: wavelengths over L0 / it are divided
  std::optional<double> high_freq_factor;  ///< llama3: wavelengths under L0 / it are kept
  std::vector<double> short_factor;        ///< longrope: one rescale per plane, up to L0
  std::vector<double> long_factor;         ///< longrope: one rescale per plane, past L0
};

/// What a rope type gives a layer: its inverse frequencies theta_i (dim/2 of them; head_dim/2
/// for proportional, the tail zero) and the factor cos and sin are multiplied by.
struct HfRopeFrequencies {
  std::vector<double> inv_freq;    ///< theta_i, i = 0 .. dim/2 - 1
  double attention_factor = 1;     ///< multiplies q and k after the rotation (scores: squared)
  std::int64_t rotated_width = 0;  ///< dim: the coordinates the planes cover
};

/// An ag::Error in one line naming the field unless the parameters make sense for their type:
/// head_dim >= 2, rope_theta > 1, partial_rotary_factor in (0, 1] and an even dim >= 2 (dim > 2
/// for dynamic; proportional: an even head_dim), the type's required fields present and in
/// range (factor >= 1 wherever given, llama3's high_freq_factor >= low_freq_factor > 0, yarn's
/// beta_fast > beta_slow > 0, longrope's factor lists of length dim/2 with positive entries,
/// a given attention_factor > 0, ...). transformers only warns about most of these.
void check_hf_rope(const HfRopeParameters& parameters);

/// check_hf_rope without the widths (head_dim, partial_rotary_factor, the length of longrope's
/// lists): what a rule can check before RoPE gives it its rotated width.
void check_hf_rope_fields(const HfRopeParameters& parameters);

/// The inverse frequencies and attention factor of `_compute_<type>_parameters` for a pass over
/// seq_len positions (dynamic and longrope depend on it; 0 stands for Hugging Face's None:
/// the initialisation). Checks the parameters first (check_hf_rope).
HfRopeFrequencies hf_rope_frequencies(const HfRopeParameters& parameters, std::int64_t seq_len = 0);

/// The attention factor of hf_rope_frequencies, which depends on the type's fields only: yarn's
/// attention_factor, else get_mscale(s, mscale) / get_mscale(s, mscale_all_dim) when both are
/// given and non-zero, else get_mscale(s); longrope's attention_factor, else
/// longrope_attention_factor(s, L0); 1 for the other types. Checks the fields first
/// (check_hf_rope_fields).
double hf_rope_attention_factor(const HfRopeParameters& parameters);

/// The scale s in force for a pass over seq_len positions: factor; for yarn and longrope
/// without one, max_position_embeddings / original_max_position_embeddings; for dynamic,
/// factor * T / max_position_embeddings - (factor - 1) with T = max(seq_len,
/// max_position_embeddings); 1 for default, and for proportional without a factor.
double hf_rope_scale(const HfRopeParameters& parameters, std::int64_t seq_len = 0);

// [llama3-frequencies]
/// Llama 3.1's three bands, from the default frequencies theta (of any rope width): with
/// wavelength lambda_i = 2 pi / theta_i and L0 the original context, a plane with
/// lambda_i < L0 / high_freq_factor is kept, one with lambda_i > L0 / low_freq_factor is
/// divided by `factor`, and one between is blended, (1 - g) theta_i / factor + g theta_i with
/// g = (L0 / lambda_i - low_freq_factor) / (high_freq_factor - low_freq_factor).
std::vector<double> llama3_frequencies(const std::vector<double>& theta, double factor,
                                       double low_freq_factor, double high_freq_factor,
                                       double original_length);
// [llama3-frequencies]

// [proportional-frequencies]
/// p-RoPE (Barbero et al. 2024) as Gemma 4's "proportional" rope type computes it: head_dim/2
/// planes over the whole head; the first k = floor(p * head_dim / 2) turn at
/// base^(-2i / head_dim), exponents over the whole head width (not over the rotated part, as
/// chapter 5's partial rotation spreads them), and the rest have frequency 0 (they never turn).
std::vector<double> proportional_frequencies(std::int64_t head_dim, double base, double p);
// [proportional-frequencies]

/// LongRoPE's default attention factor: sqrt(1 + ln s / ln L0), 1 when s <= 1.
double longrope_attention_factor(double factor, std::int64_t original_length);

/// YaRN's get_mscale: 0.1 * mscale * ln s + 1, and 1 when s <= 1.
double yarn_mscale(double factor, double mscale = 1);

}  // namespace pe
