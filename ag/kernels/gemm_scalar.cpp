// The scalar reference gemm: the plain triple loop the fast kernel is tested against, and
// the "scalar" SIMD path. Compiled once, for the baseline target.
#include <cstddef>
#include <vector>

#include "ag/kernels/gemm.hpp"

namespace ag::kernels::scalar {

template <class T>
void gemm(bool trans_a, bool trans_b, std::size_t M, std::size_t N, std::size_t K, T alpha,
          const T* A, std::size_t lda, const T* B, std::size_t ldb, T beta, T* C, std::size_t ldc) {
  // Row i of op(A) and column j of op(B) are copied out first, each into a contiguous row, so
  // that the dot product below walks memory in order whatever the transposes: read in place,
  // a transposed operand strides by a whole row per term, and the weight gradient of the
  // reference model (K = 2048) took minutes. The copies change no value and no order of the
  // additions.
  std::vector<T> a_rows(M * K), b_columns(N * K);
  for (std::size_t i = 0; i < M; ++i)
    for (std::size_t p = 0; p < K; ++p)
      a_rows[i * K + p] = trans_a ? A[p * lda + i] : A[i * lda + p];
  for (std::size_t p = 0; p < K; ++p)
    for (std::size_t j = 0; j < N; ++j)
      b_columns[j * K + p] = trans_b ? B[j * ldb + p] : B[p * ldb + j];
  for (std::size_t i = 0; i < M; ++i) {
    const T* a = a_rows.data() + i * K;
    for (std::size_t j = 0; j < N; ++j) {
      const T* b = b_columns.data() + j * K;
      T sum = T(0);
      for (std::size_t p = 0; p < K; ++p) sum += a[p] * b[p];
      T& out = C[i * ldc + j];
      out = beta == T(0) ? alpha * sum : alpha * sum + beta * out;
    }
  }
}

template <class T>
void gemm_batched(const BatchedGemm<T>& p) {
  for (std::size_t b = 0; b < p.batch; ++b) {
    T* C = p.C + b * p.stride_c;
    gemm(p.trans_a, p.trans_b, p.M, p.N, p.K, T(1), p.A + b * p.stride_a, p.lda,
         p.B + b * p.stride_b, p.ldb, T(0), C, p.ldc);
    for (std::size_t i = 0; i < p.M; ++i) {
      for (std::size_t j = 0; j < p.N; ++j) {
        T& out = C[i * p.ldc + j];
        if (p.bias) out = out + p.bias[j];
        if (p.relu) out = out < T(0) ? T(0) : out;
      }
    }
  }
}

template void gemm<float>(bool, bool, std::size_t, std::size_t, std::size_t, float, const float*,
                          std::size_t, const float*, std::size_t, float, float*, std::size_t);
template void gemm<double>(bool, bool, std::size_t, std::size_t, std::size_t, double, const double*,
                           std::size_t, const double*, std::size_t, double, double*, std::size_t);

template void gemm_batched<float>(const BatchedGemm<float>&);
template void gemm_batched<double>(const BatchedGemm<double>&);

}  // namespace ag::kernels::scalar
