// Matrix products, plain and batched, in three forms: A B, A B^T and A^T B. The forward of
// each is the gemm kernel; the backward rules are products of the same three forms, so
// no transpose is ever copied:  C = A B,  dA = dC B^T,  dB = A^T dC.
#include <algorithm>

#include "ag/ops.hpp"
#include "ag/threads.hpp"
#include "gemm.hpp"
#include "ag/profile.hpp"
#include "impl.hpp"

namespace ag {

namespace {

// batch independent products C_i = op(A_i) op(B_i), where a stride of 0 means that operand
// is shared by every product. Batches run on separate OpenMP threads.
template <class T>
void batched_gemm(bool trans_a, bool trans_b, std::int64_t batch, std::int64_t M,
                  std::int64_t N, std::int64_t K, const T* A, std::int64_t stride_a, const T* B,
                  std::int64_t stride_b, T* C, std::int64_t stride_c) {
  const std::size_t lda = trans_a ? M : K, ldb = trans_b ? K : N;
  const int threads = max_threads();
  if (batch == 1 && threads > 1 && M * N * K >= (1 << 21) && M >= 2 * 16) {
    // One large product (a Linear layer): split the rows of C between the threads. Each
    // block of rows of C needs the same rows of op(A) and all of op(B).
    const std::int64_t block = (M + threads - 1) / threads;
#pragma omp parallel for schedule(static)
    for (int t = 0; t < threads; ++t) {
      const std::int64_t first = t * block, rows = std::min(block, M - first);
      if (rows <= 0) continue;
      const T* a_rows = trans_a ? A + first : A + first * lda;  // op(A) row `first`
      kernels::gemm<T>(trans_a, trans_b, rows, N, K, T(1), a_rows, lda, B, ldb, T(0),
                       C + first * N, N);
    }
    return;
  }
  [[maybe_unused]] const bool worth_threads = batch > 1 && M * N * K >= 32 * 32 * 32;
#pragma omp parallel for schedule(static) if (worth_threads)
  for (std::int64_t i = 0; i < batch; ++i)
    kernels::gemm<T>(trans_a, trans_b, M, N, K, T(1), A + i * stride_a, lda, B + i * stride_b,
                     ldb, T(0), C + i * stride_c, N);
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
  return record("transpose_matmul", product_values("transpose_matmul", a, b, Transposed::a),
                {a, b}, [a0, b0](const Tensor& g) -> std::vector<Tensor> {
                  return {matmul_transposed(b0, g), matmul(a0, g)};
                });
}

}  // namespace ag
