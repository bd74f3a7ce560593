// Row softmax over a contiguous [rows, cols] array, forward and backward.
#pragma once
#include <cstddef>

namespace ag::kernels {

/// y[r, :] = softmax(x[r, :]), computed stably (the row maximum is subtracted first).
/// Entries equal to -infinity (masked scores) get probability 0. A row that is entirely
/// -infinity is an error the caller must prevent; the kernel writes NaN there.
/// Rows are split across OpenMP threads.
template <class T>
void softmax_rows(const T* x, T* y, std::size_t rows, std::size_t cols);

/// dx[r, :] = y[r, :] * (dy[r, :] - <dy[r, :], y[r, :]>)
template <class T>
void softmax_rows_backward(const T* y, const T* dy, T* dx, std::size_t rows, std::size_t cols);

namespace scalar {
template <class T>
void softmax_rows(const T* x, T* y, std::size_t rows, std::size_t cols);
template <class T>
void softmax_rows_backward(const T* y, const T* dy, T* dx, std::size_t rows, std::size_t cols);
}  // namespace scalar

}  // namespace ag::kernels
