// The small network that FIRE and the dynamic position bias evaluate at each distance: one
// number in, one bias per head out, `depth` hidden layers of `width` units between.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "ag/nn.hpp"

namespace pe {

/// The hidden layers' activation.
enum class MlpActivation {
  relu,  ///< max(z, 0): FIRE's
  silu   ///< z sigmoid(z): x-transformers' DynamicPositionBias
};

/// x [N, 1] -> Linear(1, width), activation, (Linear(width, width), activation) x (depth - 1),
/// Linear(width, H) -> [N, H]. Its linear layers are registered as "0", "1", ..., "depth" and
/// initialised as PyTorch's nn.Linear is (ag::Linear: uniform in +-1/sqrt(in)).
class DistanceMlp : public ag::Module {
 public:
  /// \param width units per hidden layer  \param depth hidden layers (at least 1)
  /// \param outputs H  \param activation of the hidden layers  \param rng the initial draws
  /// \param dtype the parameters' element type
  DistanceMlp(std::int64_t width, std::int64_t depth, std::int64_t outputs,
              MlpActivation activation, ag::Rng& rng, ag::Dtype dtype = ag::Dtype::f32);
  /// x [N, 1] -> [N, H]
  ag::Tensor forward(const ag::Tensor& x) const;
  std::int64_t outputs() const { return layers.back()->weight.size(1); }  ///< H

  const MlpActivation activation;                   ///< of the hidden layers
  std::vector<std::unique_ptr<ag::Linear>> layers;  ///< depth + 1 of them, the last one linear
};

}  // namespace pe
