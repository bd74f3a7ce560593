// Composite functions: made of primitive ops, or fused kernels checked against them.
#pragma once
#include <cstdint>

#include "ag/ops.hpp"

namespace ag {

/// Softmax along the last axis (a fused kernel with its own backward).
/// Entries at -infinity (masked) get probability 0.  [..., N] -> [..., N]
Tensor softmax(const Tensor& x);
/// log(softmax(x)) along the last axis, computed stably as x - max - log(sum(exp(x - max))).
/// [..., N] -> [..., N]
Tensor log_softmax(const Tensor& x);
/// Mean negative log-likelihood: logits [N, V], targets [N] in [0, V) or ignore_index.
/// Positions whose target is ignore_index count for nothing (ShiftK masks its first k).
/// Throws if every target is ignored. One op with its own backward rule, the same bits as
/// its composite.  logits [N, V], targets [N] -> []
Tensor cross_entropy(const Tensor& logits, const Indices& targets, std::int64_t ignore_index = -1);
/// Layer norm over the last axis: x [..., C], gamma [C], beta [C] (a fused kernel).
/// (x - mean) / sqrt(var + eps) * gamma + beta.  [..., C] -> [..., C]
Tensor layer_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, double eps = 1e-5);
/// What a linear layer applies after its bias.
enum class Activation {
  none,  ///< x W + b
  relu   ///< max(x W + b, 0)
};
/// x W + b, then the activation, as one op: the product's kernel adds b and applies the ReLU
/// as it stores each tile of the result, and the backward rule takes ReLU's mask from the
/// output (relu(z) > 0 exactly where z > 0). The same bits as the composite.
/// x [..., in], weight [in, out], bias [out] or undefined (none) -> [..., out]
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias,
              Activation activation = Activation::none);
/// GELU, tanh approximation: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).  [...] -> [...]
Tensor gelu(const Tensor& x);

/// The same functions written with primitive ops only: slower, but each line is the formula.
/// Tests check the fused versions against these.
namespace composite {
/// exp(x - max) / sum(exp(x - max)) along the last axis.  [..., N] -> [..., N]
Tensor softmax(const Tensor& x);
/// ag::layer_norm from mean, sub, mul, sqrt and div.  [..., C] -> [..., C]
Tensor layer_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, double eps = 1e-5);
/// ag::cross_entropy from log_softmax, mul and sum.  logits [N, V], targets [N] -> []
Tensor cross_entropy(const Tensor& logits, const Indices& targets, std::int64_t ignore_index = -1);
/// ag::linear from matmul, add and relu.  [..., in] -> [..., out]
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias,
              Activation activation = Activation::none);
}  // namespace composite

}  // namespace ag
