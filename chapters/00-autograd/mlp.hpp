// Chapter 0's model: a small multilayer perceptron built from ag::Linear.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ag/functional.hpp"
#include "ag/nn.hpp"

namespace ch00 {

/// widths {2, 16, 16, 2}: x [B, 2] -> Linear -> tanh -> Linear -> tanh -> Linear -> [B, 2].
/// tanh rather than ReLU keeps the function smooth, so gradient checks meet no kinks.
class MLP : public ag::Module {
 public:
  /// \param widths the width of every layer, input first (at least two)
  /// \param rng the initial weights' draws  \param dtype the parameters' element type
  MLP(const std::vector<std::int64_t>& widths, ag::Rng& rng, ag::Dtype dtype = ag::Dtype::f32) {
    ag::check(widths.size() >= 2, "MLP", "needs at least an input and an output width, got ",
              widths.size(), " widths");
    for (std::size_t i = 0; i + 1 < widths.size(); ++i) {
      layers_.push_back(std::make_unique<ag::Linear>(widths[i], widths[i + 1], rng, true, dtype));
      register_module("layers." + std::to_string(i), *layers_.back());
    }
    // Full names ("layers.1.weight") make graph dumps and gradcheck reports readable.
    for (auto& [name, parameter] : named_parameters()) parameter.set_name(name);
  }

  // [mlp-forward]
  /// x: [B, in] -> [B, out] (logits; no activation after the last layer)
  ag::Tensor forward(const ag::Tensor& x) const {
    ag::Tensor h = x;
    for (std::size_t i = 0; i < layers_.size(); ++i) {
      // matmul, then add: each primitive on the tape (layers_[i]->forward gives the same
      // numbers as one fused op, ag::linear, which the later chapters use).
      h = ag::composite::linear(h, layers_[i]->weight, layers_[i]->bias);
      if (i + 1 < layers_.size()) h = ag::tanh(h);
    }
    return h;
  }
  // [mlp-forward]

 private:
  std::vector<std::unique_ptr<ag::Linear>> layers_;
};

}  // namespace ch00
