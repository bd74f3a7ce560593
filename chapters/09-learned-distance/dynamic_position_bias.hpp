// The dynamic position bias of x-transformers (lucidrains' DynamicPositionBias, after the
// continuous position bias of Swin Transformer V2): an MLP of the raw distance,
//   b(i, j) = f(i - j)   or, with log_distance,   b(i, j) = f(log(1 + (i - j))),
// with one output per head. It is FIRE without the normalisation: f reads the distance itself,
// so past the training length it meets inputs it never saw. Since the bias depends on the
// distance alone, f runs once per distance and the [H, Tq, Tk] bias picks rows of that table,
// as T5's picks rows of its buckets' table.
// x-transformers' defaults: depth 2 (Linear(1, w), SiLU, Linear(w, w), SiLU, Linear(w, H)),
// w = model width / 4, no LayerNorm between, and one module for all layers.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "chapters/09-learned-distance/distance_bias.hpp"
#include "chapters/09-learned-distance/distance_mlp.hpp"

namespace pe {

/// The options of `pe train --encoding dpb`.
struct DynamicBiasOptions {
  std::int64_t width = 0;     ///< f's hidden units; 0: the model width / 4 (at least 1)
  std::int64_t depth = 2;     ///< f's hidden layers (SiLU)
  bool log_distance = false;  ///< f reads log(1 + d) instead of d
  bool shared = true;         ///< one function for all layers, as x-transformers has it
};

/// The largest hidden-to-hidden weight count, width^2 (depth - 1), that the options may ask for:
/// a bound against typing mistakes (16,777,216 numbers), far above what the book uses.
constexpr std::int64_t kLargestDynamicBiasWeights = 1 << 24;

/// An ag::Error unless width >= 1 (once resolved), depth >= 1 and width^2 (depth - 1) is at most
/// kLargestDynamicBiasWeights.
void check_dynamic_bias_options(const DynamicBiasOptions& options);

/// The MLP's input for distances 0 .. count-1: d, or log(1 + d).  -> [count, 1]
ag::Tensor dynamic_bias_inputs(std::int64_t count, bool log_distance, ag::Dtype dtype);

/// One dynamic position bias: its MLP f.
class DynamicPositionBias : public DistanceBias {
 public:
  /// options.width already resolved (>= 1); f drawn from rng as nn.Linear is.
  DynamicPositionBias(std::int64_t heads, const DynamicBiasOptions& options, ag::Rng& rng,
                      ag::Dtype dtype = ag::Dtype::f32);
  std::int64_t heads() const override { return f.outputs(); }
  /// f at distances 0 .. count-1.  -> [count, H]
  ag::Tensor table(std::int64_t count) const;
  /// bias[h, i, j] = table[d_ij, h] with d = causal_distances.  -> [H, Tq, Tk]
  ag::Tensor bias(std::int64_t queries, std::int64_t keys,
                  const Positions& q_positions) const override;

  DistanceMlp f;            ///< depth hidden layers of SiLU
  const bool log_distance;  ///< f reads log(1 + d)
};

/// The dynamic position bias: one function for all layers (x-transformers'), or one per layer.
class DynamicBiasEncoding : public DistanceBiasEncoding {
 public:
  /// \param model_width C, for the default width C / 4  \param heads H
  /// \param options as check_dynamic_bias_options accepts them (width 0: C / 4)
  /// \param rng the initial draws  \param dtype the parameters' element type
  DynamicBiasEncoding(std::int64_t model_width, std::int64_t heads,
                      const DynamicBiasOptions& options, ag::Rng& rng,
                      ag::Dtype dtype = ag::Dtype::f32);
  std::string name() const override { return "dpb"; }
  /// "input" [length]: what f reads at distances 0 .. length-1; when shared, also "table"
  /// [length, H] and "bias" [H, length, length].
  std::vector<std::pair<std::string, ag::Tensor>> inspect(std::int64_t length) const override;
  /// The options with the width resolved.
  const DynamicBiasOptions& options() const { return options_; }

 protected:
  std::shared_ptr<DistanceBias> make_function(ag::Rng& rng) const override;

 private:
  std::int64_t heads_;
  DynamicBiasOptions options_;
  ag::Dtype dtype_;
};

}  // namespace pe
