// Extending RoPE's context: rules that change RoPE's frequencies so that a model trained on
// sequences of L_train tokens can read longer ones (chapter 8 explains and measures them).
// Each rule maps the frequencies theta_i = base^(-2i/d) to new ones theta'_i; the rotation
// itself is unchanged, so the relative-offset property holds at any fixed scale s. They reach
// RoPE through chapter 5's hook (RopeFrequencyRule, extend_rope): chapter 5 knows none of them.
// Each rule computes what its reference implementation computes (the source is named below).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "chapters/05-rope/rope.hpp"

namespace pe {

/// How RoPE's frequencies are changed to reach past the training length (chapter 8).
enum class RopeScaling {
  none,       ///< theta'_i = theta_i: RoPE as trained
  linear,     ///< position interpolation (Chen et al. 2023): positions m / s, so theta_i / s
  ntk,        ///< NTK-aware (bloc97's post, 2023): base' = base * s^(d/(d-2))
  dynamic,    ///< dynamic NTK (Hugging Face's): NTK, its scale growing with the length
  yarn,       ///< YaRN as its authors' code and Hugging Face compute it: a ramp in the plane index
  yarn_paper  ///< YaRN as the paper writes it (Peng et al. 2023): a ramp in the rotations r_i
};

/// "none", "linear", "ntk", "dynamic", "yarn" or "yarn-paper"; anything else is an ag::Error
/// that lists them.
RopeScaling rope_scaling_from(const std::string& name);
/// The option value that names `scaling`: the inverse of rope_scaling_from.
std::string rope_scaling_name(RopeScaling scaling);

/// The encoding options of a scaling rule (`-o scaling=yarn -o scale=4 -o train_length=32`).
/// YaRN's two numbers of rotations keep the paper's letters: alpha is the implementations'
/// beta_slow, beta their beta_fast.
struct RopeScalingOptions {
  RopeScaling method = RopeScaling::none;  ///< which rule
  double scale = 1;                        ///< s >= 1: times L_train to reach (dynamic: its factor)
  std::int64_t train_length = 0;           ///< L_train (dynamic, yarn, yarn-paper)
  double alpha = 1;                        ///< YaRN: planes turning under alpha times: interpolated
  double beta = 32;                        ///< YaRN: planes turning over beta times: kept
  bool truncate = true;                    ///< yarn: the ramp's ends rounded to whole planes
};

/// An ag::Error unless the options make sense for their method: s finite and >= 1,
/// train_length >= 1 for dynamic and both YaRNs, 0 < alpha < beta for both YaRNs.
void check_rope_scaling(const RopeScalingOptions& options);

/// The scale in force for a forward pass over positions 0 .. length-1: options.scale, 1 for
/// none, and for dynamic NTK s * T / L_train - (s - 1) with T = max(length, L_train), which is
/// 1 up to the training length and max(1, T / L_train) for the default s = 1.
double rope_scale_at(const RopeScalingOptions& options, std::int64_t length);

/// The linear ramp clamp((x - a) / (b - a), 0, 1): 0 up to a, 1 from b on. The paper's YaRN
/// runs it over the rotations r_i (gamma_i = ramp(r_i, alpha, beta)), the implementations' over
/// the plane index i (between yarn_correction_range's ends).
double yarn_ramp(double x, double a, double b);

/// The plane index, a real number, at which a frequency turns `rotations` times over the
/// training length: the i that solves r_i = L_train * base^(-2i/d) / (2 pi) = rotations, i.e.
/// d ln(L_train / (2 pi rotations)) / (2 ln base) (the implementations' find_correction_dim).
double yarn_correction_dim(double rotations, std::int64_t dim, double base,
                           std::int64_t train_length);

/// The ends {low, high} of the implementations' ramp over the planes: low where a plane turns
/// beta times, high where it turns alpha times, rounded outwards (floor, ceil) when
/// options.truncate, then low >= 0 and high <= d - 1 (as the implementations clamp them).
std::pair<double, double> yarn_correction_range(std::int64_t dim, double base,
                                                const RopeScalingOptions& options);

/// The frequencies theta'_i (i = 0 .. d/2-1) that RoPE uses for a pass over `length`
/// positions under `options`, for a rotated width d and base. With RopeScaling::none they are
/// exactly rope_frequencies(dim, base).
std::vector<double> scaled_rope_frequencies(std::int64_t dim, double base,
                                            const RopeScalingOptions& options, std::int64_t length);

/// The factor by which both YaRNs multiply q and k, sqrt(1/t) = 0.1 ln s + 1, so that the
/// scores are multiplied by its square; 1 for the other methods.
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

/// The scaling options of a "rope" spec: scaling=none|linear|ntk|dynamic|yarn|yarn-paper,
/// scale=S (linear, ntk, both YaRNs; optional for dynamic, default 1), train_length=L (dynamic,
/// both YaRNs), alpha and beta (both YaRNs), truncate=true|false (yarn). An option the chosen
/// rule does not use is an error, as is a rule without the options it needs.
RopeScalingOptions rope_scaling_options(const EncodingSpec& spec);

/// Gives "rope" (chapter 5) the scaling options, through extend_rope.
void register_ch08_encodings();

}  // namespace pe
