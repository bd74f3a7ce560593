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

MatmulShape matmul_shape(const Tensor& a, const Tensor& b) {
  check(a.dim() >= 2 && b.dim() >= 2, "matmul", "needs at least 2-d operands, got ",
        shape_string(a.shape()), " @ ", shape_string(b.shape()));
  const std::int64_t M = a.size(-2), K = a.size(-1), N = b.size(-1);
  check(b.size(-2) == K, "matmul", "inner sizes differ: ", shape_string(a.shape()), " @ ",
        shape_string(b.shape()), " (", K, " vs ", b.size(-2), ")");
  const bool shared_b = b.dim() == 2;
  if (!shared_b)
    check(Shape(a.shape().begin(), a.shape().end() - 2) ==
              Shape(b.shape().begin(), b.shape().end() - 2),
          "matmul", "batch dimensions differ: ", shape_string(a.shape()), " @ ",
          shape_string(b.shape()));
  std::int64_t batch = 1;
  for (std::int64_t i = 0; i + 2 < a.dim(); ++i) batch *= a.shape()[i];
  return {batch, M, K, N, shared_b};
}

}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b) {
  check_same_dtype("matmul", a, b);
  const MatmulShape s = matmul_shape(a, b);
  Shape out_shape(a.shape().begin(), a.shape().end() - 1);
  out_shape.push_back(s.N);
  Tensor out = empty(out_shape, a.dtype());
  // With a shared b, all batches stack into one tall product: [batch*M, K] @ [K, N].
  const std::int64_t batch = s.shared_b ? 1 : s.batch;
  const std::int64_t M = s.shared_b ? s.batch * s.M : s.M;
  dispatch(a.dtype(), [&](auto t) {
    using T = decltype(t);
    batched_gemm<T>(false, false, batch, M, s.N, s.K, a.data<T>(), M * s.K, b.data<T>(),
                    s.K * s.N, out.data<T>(), M * s.N);
  });
  Tensor a0 = a.detach(), b0 = b.detach();
  return record("matmul", out, {a, b}, [a0, b0, batch, M, s](const Tensor& g) -> std::vector<Tensor> {
    Tensor ga = empty(a0.shape(), a0.dtype());
    Tensor gb = empty(b0.shape(), b0.dtype());
    dispatch(g.dtype(), [&](auto t) {
      using T = decltype(t);
      // dA = dC B^T: [M, N] @ [N, K]
      batched_gemm<T>(false, true, batch, M, s.K, s.N, g.data<T>(), M * s.N, b0.data<T>(),
                      s.shared_b ? 0 : s.K * s.N, ga.data<T>(), M * s.K);
      // dB = A^T dC: [K, M] @ [M, N]; for a shared b this sums over every stacked row.
      batched_gemm<T>(true, false, batch, s.K, s.N, M, a0.data<T>(), M * s.K, g.data<T>(),
                      M * s.N, gb.data<T>(), s.K * s.N);
    });
    return {ga, gb};
  });
}

}  // namespace ag
