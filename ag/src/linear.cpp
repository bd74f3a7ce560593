// The linear layer as one op: x W + b and an optional ReLU, fused into the product's kernel.
// Written with primitive ops (composite::linear) it is three passes over the output after the
// product (the bias added, the ReLU, and in the backward sweep the ReLU's mask and the bias's
// column sums) and keeps the pre-activation for the mask; here the gemm writes the finished
// value as it stores each tile, and the backward rule makes one pass before its two products.
#include "ag/functional.hpp"
#include "ag/kernels/columns.hpp"
#include "ag/kernels/gemm.hpp"
#include "ag/profile.hpp"
#include "ag/src/impl.hpp"

namespace ag {

namespace {

// x [..., in] as [rows, in] (a free reshape of contiguous values).
std::int64_t rows_of(const Tensor& x) { return x.numel() / x.size(-1); }

}  // namespace

Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias, Activation activation) {
  profile::Scope profile_scope("linear");
  check(x.dim() >= 1 && weight.dim() == 2 && x.size(-1) == weight.size(0), "linear",
        "expected x [..., in] and weight [in, out], got ", shape_string(x.shape()), " and ",
        shape_string(weight.shape()));
  check_same_dtype("linear", x, weight);
  const std::int64_t in = weight.size(0), out = weight.size(1), rows = rows_of(x);
  const bool has_bias = bias.defined(), relu = activation == Activation::relu;
  if (has_bias) {
    check(bias.shape() == Shape{out}, "linear", "bias ", shape_string(bias.shape()), " must be [",
          out, "] for weight ", shape_string(weight.shape()));
    check_same_dtype("linear", x, bias);
  }
  Shape shape = x.shape();
  shape.back() = out;
  Tensor y = empty(shape, x.dtype());
  dispatch(x.dtype(), [&](auto t) {
    using T = decltype(t);
    kernels::BatchedGemm<T> p;
    p.M = std::size_t(rows);
    p.N = std::size_t(out);
    p.K = std::size_t(in);
    p.A = x.data<T>();
    p.lda = std::size_t(in);
    p.B = weight.data<T>();
    p.ldb = std::size_t(out);
    p.C = y.data<T>();
    p.ldc = std::size_t(out);
    p.bias = has_bias ? bias.data<T>() : nullptr;
    p.relu = relu;
    profile::ProductScope product_scope(profile::ProductKind::xW, 1, rows, out, in);
    kernels::gemm_batched(p);
  });

  Tensor x0 = alias(x, {rows, in}), w0 = weight.detach(), y0 = y.detach();
  const Shape x_shape = x.shape();
  std::vector<Tensor> inputs{x, weight};
  if (has_bias) inputs.push_back(bias);
  return record(
      "linear", y, std::move(inputs),
      [x0, w0, y0, x_shape, rows, out, has_bias, relu](const Tensor& g) -> std::vector<Tensor> {
        // dz = g where y > 0 (ReLU's mask, from the output) and db = the column sums of dz,
        // in one pass; then the two products of matmul's rule: dx = dz W^T, dW = x^T dz.
        Tensor dz = alias(g, {rows, out}), db;
        if (has_bias || relu) {
          if (has_bias) db = empty({out}, g.dtype());
          if (relu) dz = empty({rows, out}, g.dtype());
          dispatch(g.dtype(), [&](auto t) {
            using T = decltype(t);
            kernels::bias_relu_backward(
                g.data<T>(), relu ? y0.data<T>() : nullptr, relu ? dz.data<T>() : nullptr,
                has_bias ? db.data<T>() : nullptr, std::size_t(rows), std::size_t(out));
          });
        }
        Tensor dx = alias(matmul_transposed(dz, w0), x_shape);
        Tensor dw = transpose_matmul(x0, dz);
        if (has_bias) return {dx, dw, db};
        return {dx, dw};
      });
}

}  // namespace ag
