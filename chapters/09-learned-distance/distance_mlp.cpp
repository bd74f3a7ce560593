#include "chapters/09-learned-distance/distance_mlp.hpp"

#include <string>

namespace pe {

using ag::Tensor;

DistanceMlp::DistanceMlp(std::int64_t width, std::int64_t depth, std::int64_t outputs,
                         MlpActivation activation_, ag::Rng& rng, ag::Dtype dtype)
    : activation(activation_) {
  ag::check(width >= 1 && depth >= 1 && outputs >= 1, "distance MLP",
            "width, depth and outputs must be at least 1, got ", width, ", ", depth, " and ",
            outputs);
  std::int64_t in = 1;  // one number: the (transformed) distance
  for (std::int64_t layer = 0; layer < depth; ++layer, in = width)
    layers.push_back(std::make_unique<ag::Linear>(in, width, rng, true, dtype));
  layers.push_back(std::make_unique<ag::Linear>(in, outputs, rng, true, dtype));
  for (std::size_t i = 0; i < layers.size(); ++i) register_module(std::to_string(i), *layers[i]);
}

Tensor DistanceMlp::forward(const Tensor& x) const {
  ag::check(x.dim() == 2 && x.size(1) == 1, "distance MLP", "expected x [N, 1], got ",
            ag::shape_string(x.shape()));
  Tensor h = x;
  for (std::size_t i = 0; i + 1 < layers.size(); ++i) {
    if (activation == MlpActivation::relu) {
      h = layers[i]->forward(h, ag::Activation::relu);
    } else {
      const Tensor z = layers[i]->forward(h);
      h = ag::mul(z, ag::sigmoid(z));  // SiLU
    }
  }
  return layers.back()->forward(h);
}

}  // namespace pe
