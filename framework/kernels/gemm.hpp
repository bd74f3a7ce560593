// General matrix multiply: the kernel that training time is spent in.
#pragma once
#include <cstddef>

namespace ag::kernels {

/// C = alpha * op(A) * op(B) + beta * C, all row-major.
/// op(A) is [M, K]: A itself ([M, K], row stride lda) or, with trans_a, the transpose of a
/// stored [K, M] matrix. op(B) is [K, N] likewise. C is [M, N] with row stride ldc.
/// With beta == 0, C is overwritten and may hold garbage (NaN) on entry.
/// Single-threaded: callers parallelise over independent products (batches).
template <class T>
void gemm(bool trans_a, bool trans_b, std::size_t M, std::size_t N, std::size_t K, T alpha,
          const T* A, std::size_t lda, const T* B, std::size_t ldb, T beta, T* C, std::size_t ldc);

namespace scalar {
/// The plain triple loop with the same contract: the reference the fast kernel is tested
/// against.
template <class T>
void gemm(bool trans_a, bool trans_b, std::size_t M, std::size_t N, std::size_t K, T alpha,
          const T* A, std::size_t lda, const T* B, std::size_t ldb, T beta, T* C, std::size_t ldc);
}  // namespace scalar

}  // namespace ag::kernels
