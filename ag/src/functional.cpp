// Composite functions. softmax and layer_norm run fused kernels with their own backward
// rules; namespace composite holds the same functions written with primitive ops, which the
// tests use as the reference.
#include "ag/functional.hpp"

#include <cmath>
#include <limits>
#include <tuple>

#include "ag/kernels/layernorm.hpp"
#include "ag/kernels/softmax.hpp"
#include "ag/profile.hpp"
#include "ag/src/impl.hpp"

namespace ag {

namespace {
// [..., C] as rows x cols.
std::pair<std::size_t, std::size_t> rows_cols(const char* op, const Tensor& x) {
  check(x.dim() >= 1, op, "needs at least one axis, got a scalar");
  const auto cols = static_cast<std::size_t>(x.size(-1));
  return {cols ? static_cast<std::size_t>(x.numel()) / cols : 0, cols};
}
}  // namespace

Tensor softmax(const Tensor& x) {
  profile::Scope profile_scope("softmax");
  std::size_t rows, cols;  // not a structured binding: clang 14 cannot capture one in a lambda
  std::tie(rows, cols) = rows_cols("softmax", x);
  Tensor y = empty(x.shape(), x.dtype());
  dispatch(x.dtype(), [&](auto t) {
    using T = decltype(t);
    kernels::softmax_rows(x.data<T>(), y.data<T>(), rows, cols);
  });
  Tensor y0 = y.detach();
  return record("softmax", y, {x}, [y0, rows, cols](const Tensor& g) -> std::vector<Tensor> {
    Tensor gx = empty(g.shape(), g.dtype());
    dispatch(g.dtype(), [&](auto t) {
      using T = decltype(t);
      kernels::softmax_rows_backward(y0.data<T>(), g.data<T>(), gx.data<T>(), rows, cols);
    });
    return {gx};
  });
}

Tensor log_softmax(const Tensor& x) {
  profile::Scope profile_scope("log_softmax");
  // The max is a constant shift (it cancels in the formula), so it is detached: only the
  // numerics need it, not the gradient.
  Tensor shifted = sub(x, max(x, -1, true).detach());
  return sub(shifted, log(sum(exp(shifted), {-1}, true)));
}

Tensor layer_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, double eps) {
  profile::Scope profile_scope("layer_norm");
  std::size_t rows, cols;  // not a structured binding: clang 14 cannot capture one in a lambda
  std::tie(rows, cols) = rows_cols("layer_norm", x);
  check(gamma.shape() == Shape{x.size(-1)} && beta.shape() == Shape{x.size(-1)}, "layer_norm",
        "gamma ", shape_string(gamma.shape()), " and beta ", shape_string(beta.shape()),
        " must both be [", x.size(-1), "] for x of shape ", shape_string(x.shape()));
  check_same_dtype("layer_norm", x, gamma);
  check_same_dtype("layer_norm", x, beta);
  Tensor y = empty(x.shape(), x.dtype());
  Tensor mean = empty({static_cast<std::int64_t>(rows)}, x.dtype());
  Tensor rstd = empty({static_cast<std::int64_t>(rows)}, x.dtype());
  dispatch(x.dtype(), [&](auto t) {
    using T = decltype(t);
    kernels::layernorm_rows(x.data<T>(), gamma.data<T>(), beta.data<T>(), y.data<T>(),
                            mean.data<T>(), rstd.data<T>(), rows, cols, static_cast<T>(eps));
  });
  Tensor x0 = x.detach(), gamma0 = gamma.detach();
  return record("layer_norm", y, {x, gamma, beta},
                [x0, gamma0, mean, rstd, rows, cols](const Tensor& g) -> std::vector<Tensor> {
                  Tensor gx = empty(x0.shape(), g.dtype());
                  Tensor ggamma = zeros(gamma0.shape(), g.dtype());
                  Tensor gbeta = zeros(gamma0.shape(), g.dtype());
                  dispatch(g.dtype(), [&](auto t) {
                    using T = decltype(t);
                    kernels::layernorm_rows_backward(x0.data<T>(), gamma0.data<T>(), mean.data<T>(),
                                                     rstd.data<T>(), g.data<T>(), gx.data<T>(),
                                                     ggamma.data<T>(), gbeta.data<T>(), rows, cols);
                  });
                  return {gx, ggamma, gbeta};
                });
}

Tensor gelu(const Tensor& x) {
  profile::Scope profile_scope("gelu");
  const double c = std::sqrt(2.0 / M_PI);
  Tensor inner = mul(add(x, mul(pow(x, 3.0), 0.044715)), c);
  return mul(mul(x, 0.5), add(tanh(inner), 1.0));
}

namespace composite {

Tensor softmax(const Tensor& x) {
  Tensor e = exp(sub(x, max(x, -1, true).detach()));
  return div(e, sum(e, {-1}, true));
}

Tensor layer_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, double eps) {
  Tensor centered = sub(x, mean(x, {-1}, true));
  Tensor variance = mean(mul(centered, centered), {-1}, true);  // biased, as in the paper
  Tensor normalized = div(centered, sqrt(add(variance, eps)));
  return add(mul(normalized, gamma), beta);
}

Tensor cross_entropy(const Tensor& logits, const Indices& targets, std::int64_t ignore_index) {
  const std::int64_t counted = counted_targets(logits, targets, ignore_index);
  const std::int64_t N = logits.size(0), V = logits.size(1);
  // pick[n, v] = 1 at the target of row n (0 on ignored rows): the loss picks log p[n, target].
  std::vector<double> pick(static_cast<std::size_t>(N * V), 0.0);
  for (std::int64_t n = 0; n < N; ++n)
    if (targets.values[n] != ignore_index) pick[n * V + targets.values[n]] = 1.0;
  Tensor picked = mul(log_softmax(logits), from_vector(pick, {N, V}, logits.dtype()));
  return mul(sum(picked), -1.0 / double(counted));
}

Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias, Activation activation) {
  Tensor z = matmul(x, weight);
  if (bias.defined()) z = add(z, bias);
  return activation == Activation::relu ? relu(z) : z;
}

}  // namespace composite

}  // namespace ag
