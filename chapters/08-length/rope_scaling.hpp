// Extending RoPE's context: four rules that change RoPE's frequencies so that a model trained
// on sequences of L_train tokens can read longer ones (chapter 8 explains and measures them).
// Each rule maps the frequencies theta_i = base^(-2i/d) to new ones theta'_i; the rotation
// itself is unchanged, so the relative-offset property holds at any fixed scale s. They reach
// RoPE through chapter 5's hook (RopeFrequencyRule, extend_rope): chapter 5 knows none of them.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "chapters/05-rope/rope.hpp"

namespace pe {

/// How RoPE's frequencies are changed to reach past the training length (chapter 8).
enum class RopeScaling {
  none,     ///< theta'_i = theta_i: RoPE as trained
  linear,   ///< position interpolation (Chen et al. 2023): positions m / s, so theta_i / s
  ntk,      ///< NTK-aware: base' = base * s^(d/(d-2)), the lowest frequency divided by s
  dynamic,  ///< NTK-aware with s = max(1, L / L_train) for the current length L
  yarn      ///< YaRN (Peng et al. 2023): a per-frequency ramp, and an attention temperature
};

/// "none", "linear", "ntk", "dynamic" or "yarn"; anything else is an ag::Error that lists them.
RopeScaling rope_scaling_from(const std::string& name);
/// The option value that names `scaling`: the inverse of rope_scaling_from.
std::string rope_scaling_name(RopeScaling scaling);

/// The encoding options of a scaling rule (`-o scaling=yarn -o scale=4 -o train_length=32`).
struct RopeScalingOptions {
  RopeScaling method = RopeScaling::none;  ///< which rule
  double scale = 1;               ///< s >= 1 (linear, ntk, yarn): how many times L_train to reach
  std::int64_t train_length = 0;  ///< L_train (dynamic, yarn)
  double alpha = 1;               ///< YaRN's ramp: r_i < alpha interpolates fully
  double beta = 32;               ///< YaRN's ramp: r_i > beta keeps the trained frequency
};

/// An ag::Error unless the options make sense for their method: s finite and >= 1,
/// train_length >= 1 for dynamic and yarn, 0 < alpha < beta for yarn.
void check_rope_scaling(const RopeScalingOptions& options);

/// The scale s in force for a forward pass over positions 0 .. length-1: options.scale, or for
/// dynamic max(1, length / L_train); 1 for none.
double rope_scale_at(const RopeScalingOptions& options, std::int64_t length);

/// YaRN's ramp gamma(r) = clamp((r - alpha) / (beta - alpha), 0, 1) for a frequency that turns
/// r = L_train / lambda times over the training length (lambda = 2 pi / theta its wavelength):
/// 0 interpolates (theta / s), 1 keeps theta.
double yarn_ramp(double r, double alpha, double beta);

/// The frequencies theta'_i (i = 0 .. d/2-1) that RoPE uses for a pass over `length`
/// positions under `options`, for a rotated width d and base. With RopeScaling::none they are
/// exactly rope_frequencies(dim, base).
std::vector<double> scaled_rope_frequencies(std::int64_t dim, double base,
                                            const RopeScalingOptions& options, std::int64_t length);

/// The factor by which YaRN multiplies q and k, sqrt(1/t) = 0.1 ln s + 1, so that the scores
/// are multiplied by its square; 1 for the other methods.
double rope_attention_factor(const RopeScalingOptions& options, std::int64_t length);

/// A scaling rule as chapter 5's hook takes it: RoPE asks it for its frequencies and factor.
class ScaledRope : public RopeFrequencyRule {
 public:
  /// An ag::Error unless the options make sense (check_rope_scaling).
  explicit ScaledRope(RopeScalingOptions options);
  std::vector<double> frequencies(std::int64_t dim, double base,
                                  std::int64_t length) const override;
  double attention_factor(std::int64_t length) const override;
  double scale_at(std::int64_t length) const override;
  /// NTK and dynamic NTK change base by s^(d/(d-2)): they need d > 2.
  void check_width(std::int64_t rotated_width) const override;
  const RopeScalingOptions& options() const { return options_; }  ///< as constructed

 private:
  RopeScalingOptions options_;
};

/// The rule for RotaryOptions::rule: null for RopeScaling::none (RoPE as trained), otherwise
/// a ScaledRope.
std::shared_ptr<const RopeFrequencyRule> rope_scaling_rule(const RopeScalingOptions& options);

/// The scaling options of RoPE's options: those of its ScaledRope, or none when it has no rule.
RopeScalingOptions rope_scaling_of(const RotaryOptions& options);

/// The scaling options of a "rope" spec: scaling=none|linear|ntk|dynamic|yarn, scale=S
/// (linear, ntk, yarn), train_length=L (dynamic, yarn), alpha and beta (yarn). An option the
/// chosen rule does not use is an error, as is a rule without the options it needs.
RopeScalingOptions rope_scaling_options(const EncodingSpec& spec);

/// Gives "rope" (chapter 5) the scaling options, through extend_rope.
void register_ch08_encodings();

}  // namespace pe
