// FIRE (Li et al., "Functional Interpolation for Relative Positions Improves Long Context
// Transformers", ICLR 2024): the bias is a small MLP f of the distance, read on a scale that
// grows with the query's position,
//   b(i, j) = f( psi(i - j) / psi(max(L, i)) ),   psi(x) = log(c x + 1),
// so that its input lies in [0, 1] at any length ("progressive interpolation"); c and the
// threshold L are learned. T5's buckets, ALiBi and KERPLE are special cases for suitable f.
// The paper's implementation, which this follows: f = Linear(1, 32), ReLU, Linear(32, H);
// psi(x) = log(|c x| + 1) with c starting at 0.1; L = |L_multiplier * 512| with L_multiplier
// learned from 1 and 512 fixed; and 1e-6 added to the denominator.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "chapters/09-learned-distance/distance_bias.hpp"
#include "chapters/09-learned-distance/distance_mlp.hpp"

namespace pe {

/// psi, the transform of the distance before it is normalised.
enum class FireTransform {
  log,  ///< psi(x) = log(|c| x + 1): FIRE's, finer near the query than far from it
  none  ///< psi(x) = x: the paper's ablation without the log; u = (i - j) / max(L, i)
};

/// "log" or "none"; anything else is an ag::Error naming both.
FireTransform fire_transform_from(const std::string& name);
/// The name fire_transform_from accepts.
std::string fire_transform_name(FireTransform transform);

/// The options of `pe train --encoding fire`.
struct FireOptions {
  std::int64_t width = 32;                       ///< f's hidden units (one hidden layer, ReLU)
  double c = 0.1;                                ///< psi's initial c
  double threshold = 512;                        ///< L's initial value (L_init; L_multiplier = 1)
  FireTransform transform = FireTransform::log;  ///< psi
  bool shared = false;  ///< one FIRE for all layers (the paper's FIRE-Shared) or one per layer
};

/// An ag::Error unless width >= 1, c > 0 and threshold > 0 (finite).
void check_fire_options(const FireOptions& options);

/// FIRE's normalised distance, what f reads:
///   u[i, j] = psi(d_ij) / (psi(max(L, q_positions + i)) + eps),  d = causal_distances,
/// with psi(x) = log(|c| x + 1) (log) or x (none). max(n, L) is written n + relu(L - n), so
/// that its gradient reaches L where L > n, as torch.max's does. c, L: [1] -> [Tq, Tk], each in
/// [0, 1) (d <= n <= max(L, n)).
ag::Tensor fire_normalized_distance(const ag::Tensor& c, const ag::Tensor& L,
                                    FireTransform transform, std::int64_t queries,
                                    std::int64_t keys, const Positions& q_positions,
                                    double eps = 1e-6);

/// One FIRE function: f, c and L.
class FireBias : public DistanceBias {
 public:
  /// f drawn from rng as nn.Linear is; c = options.c, L_multiplier = 1, L_init = threshold.
  FireBias(std::int64_t heads, const FireOptions& options, ag::Rng& rng,
           ag::Dtype dtype = ag::Dtype::f32);
  std::int64_t heads() const override { return f.outputs(); }
  /// L = |L_multiplier * L_init|: [1]
  ag::Tensor threshold() const;
  /// fire_normalized_distance with this function's c and L.  -> [Tq, Tk]
  ag::Tensor normalized_distance(std::int64_t queries, std::int64_t keys,
                                 const Positions& q_positions) const;
  /// f(u) for every (query, key), heads first.  -> [H, Tq, Tk]
  ag::Tensor bias(std::int64_t queries, std::int64_t keys,
                  const Positions& q_positions) const override;

  DistanceMlp f;                  ///< Linear(1, width), ReLU, Linear(width, H)
  ag::Tensor c;                   ///< [1], learned
  ag::Tensor L_multiplier;        ///< [1], learned, L = |L_multiplier * L_init|
  const double L_init;            ///< fixed (a buffer in the paper's code)
  const FireTransform transform;  ///< psi
};

/// FIRE: one FireBias per layer (the paper's default), or one for all (shared = true).
class FireEncoding : public DistanceBiasEncoding {
 public:
  /// \param heads H  \param options as check_fire_options accepts them
  /// \param rng the initial draws  \param dtype the parameters' element type
  FireEncoding(std::int64_t heads, const FireOptions& options, ag::Rng& rng,
               ag::Dtype dtype = ag::Dtype::f32);
  std::string name() const override { return "fire"; }
  /// "normalized_distance" [length, length] at the initial c and L; when shared, also "bias"
  /// [H, length, length] of the shared function.
  std::vector<std::pair<std::string, ag::Tensor>> inspect(std::int64_t length) const override;
  const FireOptions& options() const { return options_; }  ///< as constructed

 protected:
  std::shared_ptr<DistanceBias> make_function(ag::Rng& rng) const override;

 private:
  std::int64_t heads_;
  FireOptions options_;
  ag::Dtype dtype_;
};

}  // namespace pe
