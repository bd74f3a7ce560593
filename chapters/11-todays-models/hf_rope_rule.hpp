// Hugging Face's rope types as options of chapter 5's "rope": `-o rope_type=llama3 -o factor=8
// ...`, under the names a config.json gives them. They reach RoPE as chapter 8's scaling rules
// do, through chapter 5's hook (RopeFrequencyRule, extend_rope); a spec chooses either
// chapter 8's scaling=... or a rope_type=..., never both.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "chapters/05-rope/rope.hpp"
#include "chapters/11-todays-models/hf_rope.hpp"

namespace pe {

/// A rope type as chapter 5's hook takes it: RoPE gives the rotated width d (the rule's
/// head_dim) and its base (rope_theta); the rest comes from the parameters. The rotated
/// fraction is RoPE's own `fraction` for every type but proportional, whose p is
/// partial_rotary_factor over the whole head.
class HfRope : public RopeFrequencyRule {
 public:
  /// head_dim and rope_theta of `parameters` are RoPE's to give; an ag::Error unless the
  /// type's fields make sense (check_hf_rope_fields).
  explicit HfRope(HfRopeParameters parameters);
  /// hf_rope_frequencies' inv_freq with head_dim = dim and rope_theta = base.
  std::vector<double> frequencies(std::int64_t dim, double base,
                                  std::int64_t length) const override;
  /// hf_rope_attention_factor (it depends on no length).
  double attention_factor(std::int64_t length) const override;
  /// hf_rope_scale at `length`.
  double scale_at(std::int64_t length) const override;
  /// check_hf_rope with head_dim = the rotated width: dynamic needs it above 2, longrope's
  /// lists one entry per plane.
  void check_width(std::int64_t rotated_width) const override;
  const HfRopeParameters& parameters() const { return parameters_; }  ///< as constructed

 private:
  HfRopeParameters parameters_;
};

/// The options chapter 11 adds to "rope": rope_type, factor, original_max_position_embeddings,
/// max_position_embeddings, attention_factor, beta_fast, beta_slow, mscale, mscale_all_dim,
/// truncate, low_freq_factor, high_freq_factor, short_factor, long_factor (comma-separated
/// numbers) and partial_rotary_factor (proportional's p).
const std::vector<std::string>& hf_rope_option_names();

/// The rope parameters of a "rope" spec; none when the spec gives none of
/// hf_rope_option_names. Each option goes through the one parser; an option without
/// rope_type, an option the type does not use (partial_rotary_factor but for proportional:
/// the rotated fraction is rope's `fraction`), rope_type=proportional with a fraction below 1,
/// and fields that check_hf_rope_fields refuses are one-line ag::Errors naming the option.
std::optional<HfRopeParameters> hf_rope_options(const EncodingSpec& spec);

/// The rule for RotaryOptions::rule: null for rope_type=default (RoPE as trained), otherwise an
/// HfRope.
std::shared_ptr<const RopeFrequencyRule> hf_rope_rule(const HfRopeParameters& parameters);

/// Gives "rope" (chapter 5) the rope_type options, through extend_rope.
void register_hf_rope_options();

}  // namespace pe
