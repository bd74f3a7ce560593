// Matrix products, plain and batched, in three forms: A B, A B^T and A^T B. The forward of
// each is the gemm kernel; the backward rules are products of the same three forms, so
// no transpose is ever copied:  C = A B,  dA = dC B^T,  dB = A^T dC.
#include <algorithm>

#include "ag/kernels/gemm.hpp"
#include "ag/ops.hpp"
#include "ag/profile.hpp"
#include "ag/src/impl.hpp"

namespace ag {

namespace {

// batch independent products C_i = op(A_i) op(B_i), where a stride of 0 means that operand
// is shared by every product; the kernel shares them between threads.
template <class T>
void batched_gemm(bool trans_a, bool trans_b, std::int64_t batch, std::int64_t M, std::int64_t N,
                  std::int64_t K, const T* A, std::int64_t stride_a, const T* B,
                  std::int64_t stride_b, T* C, std::int64_t stride_c) {
  kernels::BatchedGemm<T> p;
  p.trans_a = trans_a;
  p.trans_b = trans_b;
  p.batch = std::size_t(batch);
  p.M = std::size_t(M);
  p.N = std::size_t(N);
  p.K = std::size_t(K);
  p.A = A;
  p.lda = std::size_t(trans_a ? M : K);
  p.stride_a = std::size_t(stride_a);
  p.B = B;
  p.ldb = std::size_t(trans_b ? K : N);
  p.stride_b = std::size_t(stride_b);
  p.C = C;
  p.ldc = std::size_t(N);
  p.stride_c = std::size_t(stride_c);
  // The ops never transpose both operands (see Transposed).
  const profile::ProductKind kind = trans_a   ? profile::ProductKind::XtdY
                                    : trans_b ? profile::ProductKind::dYWt
                                              : profile::ProductKind::xW;
  profile::ProductScope product_scope(kind, batch, M, N, K);
  kernels::gemm_batched(p);
}

// Which operand is read transposed: C = A B, A B^T or A^T B.
enum class Transposed { none, b, a };

struct MatmulShape {
  std::int64_t batch, M, K, N;
  bool shared_b;  // b is one 2-d matrix for every batch
};

// a holds op(A) as [..., M, K], or [..., K, M] when a is transposed; b likewise holds op(B)
// as [..., K, N], or [..., N, K].
MatmulShape matmul_shape(const char* op, const Tensor& a, const Tensor& b, Transposed t) {
  check(a.dim() >= 2 && b.dim() >= 2, op, "needs at least 2-d operands, got ",
        shape_string(a.shape()), " and ", shape_string(b.shape()));
  const bool ta = t == Transposed::a, tb = t == Transposed::b;
  const std::int64_t M = a.size(ta ? -1 : -2), K = a.size(ta ? -2 : -1);
  const std::int64_t N = b.size(tb ? -2 : -1), b_inner = b.size(tb ? -1 : -2);
  check(b_inner == K, op, "inner sizes differ: ", shape_string(a.shape()), " and ",
        shape_string(b.shape()), " (", K, " vs ", b_inner, ")");
  const bool shared_b = b.dim() == 2;
  // A^T B never needs a shared B (the backward rules stack rows instead), so it is not offered.
  if (!shared_b || (ta && a.dim() > 2))
    check(Shape(a.shape().begin(), a.shape().end() - 2) ==
              Shape(b.shape().begin(), b.shape().end() - 2),
          op, "batch dimensions differ: ", shape_string(a.shape()), " and ",
          shape_string(b.shape()));
  std::int64_t batch = 1;
  for (std::int64_t i = 0; i + 2 < a.dim(); ++i) batch *= a.shape()[i];
  return {batch, M, K, N, shared_b};
}

// The forward of all three products: one call of the gemm kernel per batch.
Tensor product_values(const char* op, const Tensor& a, const Tensor& b, Transposed t) {
  check_same_dtype(op, a, b);
  const MatmulShape s = matmul_shape(op, a, b, t);
  Shape out_shape(a.shape().begin(), a.shape().end() - 2);
  out_shape.push_back(s.M);
  out_shape.push_back(s.N);
  Tensor out = empty(out_shape, a.dtype());
  // With a shared b and rows of A stored one after another, all batches stack into one tall
  // product [batch*M, K] @ [K, N] (a transposed A keeps its batches apart).
  const bool stack = s.shared_b && t != Transposed::a;
  const std::int64_t batch = stack ? 1 : s.batch, M = stack ? s.batch * s.M : s.M;
  dispatch(a.dtype(), [&](auto x) {
    using T = decltype(x);
    batched_gemm<T>(t == Transposed::a, t == Transposed::b, batch, M, s.N, s.K, a.data<T>(),
                    M * s.K, b.data<T>(), s.shared_b ? 0 : s.K * s.N, out.data<T>(), M * s.N);
  });
  return out;
}

// x: [..., R, C] viewed as [batch * R, C] when `stack` (a free reshape), else x itself.
Tensor stacked(const Tensor& x, bool stack) {
  if (!stack) return x;
  std::int64_t rows = 1;
  for (std::int64_t i = 0; i + 1 < x.dim(); ++i) rows *= x.shape()[i];
  return alias(x, {rows, x.size(-1)});
}

}  // namespace

// [matmul]
// C = A B:  dA = dC B^T,  dB = A^T dC.
Tensor matmul(const Tensor& a, const Tensor& b) {
  profile::Scope profile_scope("matmul");
  Tensor a0 = a.detach(), b0 = b.detach();
  return record("matmul", product_values("matmul", a, b, Transposed::none), {a, b},
                [a0, b0](const Tensor& g) -> std::vector<Tensor> {
                  // TASK 0.2 begin: the matmul backward rule
                  // A weight shared by every batch gets the sum over batches of A_i^T dC_i:
                  // one product A^T dC of all batches' rows stacked.
                  const bool shared = b0.dim() == 2;
                  return {matmul_transposed(g, b0),
                          transpose_matmul(stacked(a0, shared), stacked(g, shared))};
                  // TASK 0.2 end
                });
}
// [matmul]

// C = A B^T:  dA = dC B,  dB = dC^T A.
Tensor matmul_transposed(const Tensor& a, const Tensor& b) {
  profile::Scope profile_scope("matmul_transposed");
  Tensor a0 = a.detach(), b0 = b.detach();
  return record("matmul_transposed", product_values("matmul_transposed", a, b, Transposed::b),
                {a, b}, [a0, b0](const Tensor& g) -> std::vector<Tensor> {
                  const bool shared = b0.dim() == 2;
                  return {matmul(g, b0), transpose_matmul(stacked(g, shared), stacked(a0, shared))};
                });
}

// C = A^T B:  dA = B dC^T,  dB = A dC.
Tensor transpose_matmul(const Tensor& a, const Tensor& b) {
  profile::Scope profile_scope("transpose_matmul");
  Tensor a0 = a.detach(), b0 = b.detach();
  return record("transpose_matmul", product_values("transpose_matmul", a, b, Transposed::a), {a, b},
                [a0, b0](const Tensor& g) -> std::vector<Tensor> {
                  return {matmul_transposed(b0, g), matmul(a0, g)};
                });
}

}  // namespace ag
