// PoPE (Gopalakrishnan, Csordás, Schmidhuber and Mozer, "Decoupling the 'What' and 'Where'
// With Polar Coordinate Positional Embeddings", 2025): every coordinate c of a head becomes a
// complex number whose magnitude is the content and whose phase is the position,
//   q~_tc = softplus(q_tc) e^(i t theta_c),   k~_sc = softplus(k_sc) e^(i (s theta_c + delta_c)),
// so that the score of query t and key s is
//   Re[q~_t^H k~_s] = sum over c of softplus(q_tc) softplus(k_sc) cos((s - t) theta_c + delta_c):
// the content meets only the magnitudes, the positions only the cosine. RoPE's score has the
// same form with the planes' content angles added inside the cosine (the what-where
// entanglement PoPE removes). There are D frequencies theta_c = base^(-c/D), one per
// coordinate (RoPE has D/2, one per plane), and delta_c is a learned phase bias per head and
// frequency, held in [-2 pi, 0].
//
// In real numbers the complex product is a dot product of twice the width: q becomes
// [mu cos(phi), mu sin(phi)] [B, H, T, 2D], and (a cos x + ...)(b cos y + ...) summed gives
// a b cos(y - x). So PoPE is a rotate hook that returns q and k of width 2D; attention's
// q k^T / sqrt(D) keeps the D of the head, as x-transformers does, and the cache keeps the
// 2D-wide keys.
#pragma once
#include <cstdint>
#include <memory>
#include <numbers>
#include <string>
#include <utility>
#include <vector>

#include "chapters/01-attention/positional_encoding.hpp"

namespace pe {

/// What turns a coordinate into a magnitude: softplus (the paper's PoPE), or the paper's
/// ablations, ReLU and none (the raw coordinate, which may be negative).
enum class PopeMagnitude { softplus, relu, none };

/// "softplus", "relu" or "none"; anything else is an ag::Error listing them.
PopeMagnitude pope_magnitude_from(const std::string& name);
/// The name pope_magnitude_from accepts for `magnitude`.
std::string pope_magnitude_name(PopeMagnitude magnitude);

/// How the phase bias delta starts: at 0 (the paper's choice for length extrapolation), drawn
/// from U(-2 pi, 0) (better in distribution, the paper finds), or absent (the ablation
/// "PoPE without delta": no parameter, the phase is the position alone).
enum class PopePhaseBias { zero, uniform, none };

/// "zero", "uniform" or "none"; anything else is an ag::Error listing them.
PopePhaseBias pope_phase_bias_from(const std::string& name);
/// The name pope_phase_bias_from accepts for `bias`.
std::string pope_phase_bias_name(PopePhaseBias bias);

/// The options of `pe train --encoding pope`.
struct PopeOptions {
  double base = 10000;                                ///< theta_c = base^(-c/D)
  PopeMagnitude magnitude = PopeMagnitude::softplus;  ///< mu = softplus(x)
  PopePhaseBias phase_bias = PopePhaseBias::zero;     ///< delta's start, or none
};

/// The frequencies theta_c = base^(-c/D), c = 0 .. D-1, one per coordinate of a head of width
/// D >= 1: RoPE's frequencies for a head of width 2D (chapter 5), since base^(-2c/2D) is the
/// same number. base > 1.
std::vector<double> pope_frequencies(std::int64_t head_width, double base);

/// The lower end of the phase bias: delta is held in [-2 pi, 0].
inline constexpr double kPopeLowestPhaseBias = -2 * std::numbers::pi;

/// delta clamped to [-2 pi, 0], as -2 pi + relu(delta + 2 pi) - relu(delta): the value inside,
/// the nearer end outside, and a gradient of 1 inside and 0 outside (at the upper end, where
/// delta starts, 1: PyTorch's clamp passes it there too).  [...] -> [...]
ag::Tensor pope_clamped_phase_bias(const ag::Tensor& delta);

/// The polar form of queries or keys: x [B, H, T, D] at `positions` -> [B, H, T, 2D], the
/// first D coordinates mu_c cos(phi_c) and the last D mu_c sin(phi_c), with mu = magnitude(x)
/// and phi_c = p theta_c (+ delta_hc when delta is defined: [H, D], used as given, so clamp it
/// first). theta holds D frequencies; cos and sin of p theta_c are computed in double and then
/// rounded to x's dtype, and a delta enters through cos(a + b) = cos a cos b - sin a sin b.
ag::Tensor pope_polar(const ag::Tensor& x, const Positions& positions,
                      const std::vector<double>& theta, const ag::Tensor& delta,
                      PopeMagnitude magnitude);

/// PoPE's part in one attention layer, through the rotate hook: the layer's phase bias delta
/// [H, D], one per head and frequency (x-transformers shares one across the layers; here each
/// layer learns its own, as every part owns its parameters).
class PopePositions : public AttentionPositions {
 public:
  /// H = heads, D = head_width; options as check_pope_options checks them. A uniform phase
  /// bias is drawn from rng.
  PopePositions(std::int64_t heads, std::int64_t head_width, PopeOptions options, ag::Rng& rng,
                ag::Dtype dtype = ag::Dtype::f32);
  /// q, k [B, H, T, D] at `positions` -> q~ = pope_polar(q) and k~ = pope_polar(k) with the
  /// clamped delta, both [B, H, T, 2D].
  std::pair<ag::Tensor, ag::Tensor> rotate(const ag::Tensor& q, const ag::Tensor& k,
                                           const Positions& positions) const override;
  /// delta clamped to [-2 pi, 0] as the scores see it: [H, D]; undefined without a phase bias.
  ag::Tensor phase_bias_in_force() const;
  const PopeOptions& options() const { return options_; }  ///< as constructed

  ag::Tensor phase_bias;  ///< delta [H, D] as learned (clamped when used); none: undefined

 private:
  std::int64_t heads_, head_width_;
  PopeOptions options_;
  std::vector<double> theta_;
};

/// An ag::Error in one line naming the option unless base > 1 (and finite).
void check_pope_options(const PopeOptions& options);

/// PoPE: nothing before the first block; each attention layer gets a PopePositions.
class PopeEncoding : public PositionalEncoding {
 public:
  /// H = heads >= 1 heads of width D = head_width >= 1; options as check_pope_options checks.
  PopeEncoding(std::int64_t heads, std::int64_t head_width, PopeOptions options = {},
               ag::Dtype dtype = ag::Dtype::f32);
  std::string name() const override { return "pope"; }
  /// A PopePositions with this encoding's shape and options (the encoding remembers it, for
  /// inspect, for as long as the layer keeps it).
  std::shared_ptr<AttentionPositions> make_attention_part(ag::Rng& rng) const override;
  /// "frequencies" [D]: theta_c; "angles" [length, D]: p theta_c for p = 0 .. length-1;
  /// "phase_bias" [L, H, D]: delta clamped as the scores see it, for each of the L layers whose
  /// parts this encoding made and that are still alive (a trained model's), or, when none is,
  /// the start of one layer drawn from a generator seeded with 0 (zeros for "zero"). Without a
  /// phase bias there is no "phase_bias".
  std::vector<std::pair<std::string, ag::Tensor>> inspect(std::int64_t length) const override;
  const PopeOptions& options() const { return options_; }  ///< as constructed

 private:
  std::int64_t heads_, head_width_;
  PopeOptions options_;
  ag::Dtype dtype_;
  mutable std::vector<std::weak_ptr<PopePositions>> parts_;  // the layers' parts, in order
};

/// Adds "pope" (options base, magnitude and phase_bias) to the encoding registry.
void register_pope();

}  // namespace pe
