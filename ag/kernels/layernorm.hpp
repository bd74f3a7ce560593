// Layer normalisation over the last axis of a contiguous [rows, cols] array.
#pragma once
#include <cstddef>

namespace ag::kernels {

/// y = (x - mean) * rstd * gamma + beta, row by row, with rstd = 1 / sqrt(var + eps) and the
/// biased variance (divide by cols). mean and rstd ([rows]) are saved for the backward pass.
/// gamma and beta have cols entries. Rows are split across OpenMP threads.
template <class T>
void layernorm_rows(const T* x, const T* gamma, const T* beta, T* y, T* mean, T* rstd,
                    std::size_t rows, std::size_t cols, T eps);

/// Given dy, writes dx ([rows, cols]) and ADDS into dgamma and dbeta ([cols] each).
template <class T>
void layernorm_rows_backward(const T* x, const T* gamma, const T* mean, const T* rstd, const T* dy,
                             T* dx, T* dgamma, T* dbeta, std::size_t rows, std::size_t cols);

namespace scalar {
template <class T>
void layernorm_rows(const T* x, const T* gamma, const T* beta, T* y, T* mean, T* rstd,
                    std::size_t rows, std::size_t cols, T eps);
template <class T>
void layernorm_rows_backward(const T* x, const T* gamma, const T* mean, const T* rstd, const T* dy,
                             T* dx, T* dgamma, T* dbeta, std::size_t rows, std::size_t cols);
}  // namespace scalar

}  // namespace ag::kernels
