// Matrix products, plain and batched. Forward and backward are all the same gemm kernel
// with different transposes:  C = A B,  dA = dC B^T,  dB = A^T dC.
#include <omp.h>

#include <algorithm>

#include "ag/ops.hpp"
#include "gemm.hpp"
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
  const int threads = omp_get_max_threads();
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
  const bool worth_threads = batch > 1 && M * N * K >= 32 * 32 * 32;
#pragma omp parallel for schedule(static) if (worth_threads)
  for (std::int64_t i = 0; i < batch; ++i)
    kernels::gemm<T>(trans_a, trans_b, M, N, K, T(1), A + i * stride_a, lda, B + i * stride_b,
                     ldb, T(0), C + i * stride_c, N);
}

struct MatmulShape {
  std::int64_t batch, M, K, N;
  bool shared_b;  // b is one [K, N] matrix for every batch
};

// b_transposed: b holds [..., N, K] and the product is a @ b^T.
MatmulShape matmul_shape(const char* op, const Tensor& a, const Tensor& b, bool b_transposed) {
  check(a.dim() >= 2 && b.dim() >= 2, op, "needs at least 2-d operands, got ",
        shape_string(a.shape()), " and ", shape_string(b.shape()));
  const std::int64_t M = a.size(-2), K = a.size(-1);
  const std::int64_t N = b_transposed ? b.size(-2) : b.size(-1);
  const std::int64_t b_inner = b_transposed ? b.size(-1) : b.size(-2);
  check(b_inner == K, op, "inner sizes differ: ", shape_string(a.shape()), " and ",
        shape_string(b.shape()), " (", K, " vs ", b_inner, ")");
  const bool shared_b = b.dim() == 2;
  if (!shared_b)
    check(Shape(a.shape().begin(), a.shape().end() - 2) ==
              Shape(b.shape().begin(), b.shape().end() - 2),
          op, "batch dimensions differ: ", shape_string(a.shape()), " and ",
          shape_string(b.shape()));
  std::int64_t batch = 1;
  for (std::int64_t i = 0; i + 2 < a.dim(); ++i) batch *= a.shape()[i];
  return {batch, M, K, N, shared_b};
}

Tensor product(const char* op, const Tensor& a, const Tensor& b, bool bt) {
  check_same_dtype(op, a, b);
  const MatmulShape s = matmul_shape(op, a, b, bt);
  Shape out_shape(a.shape().begin(), a.shape().end() - 1);
  out_shape.push_back(s.N);
  Tensor out = empty(out_shape, a.dtype());
  // With a shared b, all batches stack into one tall product: [batch*M, K] @ [K, N].
  const std::int64_t batch = s.shared_b ? 1 : s.batch;
  const std::int64_t M = s.shared_b ? s.batch * s.M : s.M;
  const std::int64_t stride_b = s.shared_b ? 0 : s.K * s.N;
  dispatch(a.dtype(), [&](auto t) {
    using T = decltype(t);
    batched_gemm<T>(false, bt, batch, M, s.N, s.K, a.data<T>(), M * s.K, b.data<T>(), stride_b,
                    out.data<T>(), M * s.N);
  });
  Tensor a0 = a.detach(), b0 = b.detach();
  return record(op, out, {a, b}, [a0, b0, batch, M, s, bt, stride_b](const Tensor& g) -> std::vector<Tensor> {
    Tensor ga = empty(a0.shape(), a0.dtype());
    Tensor gb = empty(b0.shape(), b0.dtype());
    dispatch(g.dtype(), [&](auto t) {
      using T = decltype(t);
      const T *A = a0.data<T>(), *B = b0.data<T>(), *G = g.data<T>();
      // dA = dC op(B)^T: for C = A B that is dC B^T; for C = A B^T it is dC B.
      batched_gemm<T>(false, !bt, batch, M, s.K, s.N, G, M * s.N, B, stride_b, ga.data<T>(),
                      M * s.K);
      // For C = A B: dB = A^T dC [K, N]. For C = A B^T: dB = dC^T A [N, K].
      // With a shared b, the stacked rows make this the sum over every batch.
      if (!bt)
        batched_gemm<T>(true, false, batch, s.K, s.N, M, A, M * s.K, G, M * s.N, gb.data<T>(),
                        s.K * s.N);
      else
        batched_gemm<T>(true, false, batch, s.N, s.K, M, G, M * s.N, A, M * s.K, gb.data<T>(),
                        s.K * s.N);
    });
    return {ga, gb};
  });
}

}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b) { return product("matmul", a, b, false); }

Tensor matmul_transposed(const Tensor& a, const Tensor& b) {
  return product("matmul_transposed", a, b, true);
}

}  // namespace ag
