// General matrix multiply: the kernel that training time is spent in.
#pragma once
#include <cstddef>

namespace ag::kernels {

/// C = alpha * op(A) * op(B) + beta * C, all row-major.
/// op(A) is [M, K]: A itself ([M, K], row stride lda) or, with trans_a, the transpose of a
/// stored [K, M] matrix. op(B) is [K, N] likewise. C is [M, N] with row stride ldc.
/// With beta == 0, C is overwritten and may hold garbage (NaN) on entry.
/// Single-threaded (gemm_batched is the one that uses threads).
template <class T>
void gemm(bool trans_a, bool trans_b, std::size_t M, std::size_t N, std::size_t K, T alpha,
          const T* A, std::size_t lda, const T* B, std::size_t ldb, T beta, T* C, std::size_t ldc);

/// `batch` independent products C_b = op(A_b) op(B_b) (alpha 1, beta 0; op as for gemm), each
/// finished by an optional epilogue written as the tiles of C are stored:
/// C_b = relu(C_b + bias), with bias one row [N] added to every row. A stride of 0 shares
/// that operand between all products (a Linear layer's weight).
template <class T>
struct BatchedGemm {
  bool trans_a = false, trans_b = false;
  std::size_t batch = 1, M = 0, N = 0, K = 0;
  const T* A = nullptr;
  std::size_t lda = 0, stride_a = 0;
  const T* B = nullptr;
  std::size_t ldb = 0, stride_b = 0;
  T* C = nullptr;
  std::size_t ldc = 0, stride_c = 0;
  const T* bias = nullptr;  ///< [N], or null for none
  bool relu = false;        ///< then max(C, 0); NaN passes through, as kernels::relu
};

/// Runs a BatchedGemm on up to ag::max_threads() threads: the products of a batch each on one
/// thread, a single large product split by rows of C with op(B) packed once for all threads.
/// Every element of C is the same sum, added in the same order, at any thread count and with
/// or without the epilogue: C + bias rounds as the separate addition would.
template <class T>
void gemm_batched(const BatchedGemm<T>& p);

namespace scalar {
/// The plain triple loop with the same contract: the reference the fast kernel is tested
/// against.
template <class T>
void gemm(bool trans_a, bool trans_b, std::size_t M, std::size_t N, std::size_t K, T alpha,
          const T* A, std::size_t lda, const T* B, std::size_t ldb, T beta, T* C, std::size_t ldc);
/// One product after another through scalar::gemm, then the epilogue as a separate loop.
template <class T>
void gemm_batched(const BatchedGemm<T>& p);
}  // namespace scalar

}  // namespace ag::kernels
