// Sums down the columns of a contiguous [rows, cols] array: the gradient of a bias that was
// added to every row (a Linear layer's), with ReLU's mask applied on the way.
#pragma once
#include <cstddef>

namespace ag::kernels {

/// For the gradient g [rows, cols] of relu(x W + b) (or of x W + b when y is null):
/// g_out = g where y > 0, else 0, when y is given (g_out may be null when y is);
/// db[c] = the sum of g_out[r, c] (or g[r, c]) over r, added in row order from 0 (db may be
/// null: no bias). y is the layer's output: relu(z) > 0 exactly where z > 0, so ReLU's
/// backward needs no copy of its input. Column ranges are split across threads: each column
/// is summed by one thread in row order, the same bits at any thread count.
template <class T>
void bias_relu_backward(const T* g, const T* y, T* g_out, T* db, std::size_t rows,
                        std::size_t cols);

namespace scalar {
template <class T>
void bias_relu_backward(const T* g, const T* y, T* g_out, T* db, std::size_t rows,
                        std::size_t cols);
}  // namespace scalar

}  // namespace ag::kernels
