// The scalar twins of the softmax kernels: serial, the textbook formulas written out, the
// reference for tests and the "scalar" SIMD path. Compiled once, for the baseline target.
#include <cmath>
#include <cstddef>
#include <limits>

#include "ag/kernels/softmax.hpp"

namespace ag::kernels::scalar {

template <class T>
void softmax_rows(const T* x, T* y, std::size_t rows, std::size_t cols) {
  for (std::size_t r = 0; r < rows; ++r) {
    const T* xr = x + r * cols;
    T* yr = y + r * cols;
    if (cols == 0) continue;
    T m = -std::numeric_limits<T>::infinity();
    for (std::size_t j = 0; j < cols; ++j) m = xr[j] > m ? xr[j] : m;
    if (m == -std::numeric_limits<T>::infinity()) {
      for (std::size_t j = 0; j < cols; ++j) yr[j] = std::numeric_limits<T>::quiet_NaN();
      continue;
    }
    T s = T(0);
    for (std::size_t j = 0; j < cols; ++j) {
      yr[j] = std::exp(xr[j] - m);
      s += yr[j];
    }
    for (std::size_t j = 0; j < cols; ++j) yr[j] /= s;
  }
}

template <class T>
void softmax_rows_backward(const T* y, const T* dy, T* dx, std::size_t rows, std::size_t cols) {
  // TASK 0.5 begin: the fused softmax backward
  for (std::size_t r = 0; r < rows; ++r) {
    const T* yr = y + r * cols;
    const T* dyr = dy + r * cols;
    T* dxr = dx + r * cols;
    T dot = T(0);
    for (std::size_t j = 0; j < cols; ++j) dot += dyr[j] * yr[j];
    for (std::size_t j = 0; j < cols; ++j) dxr[j] = yr[j] * (dyr[j] - dot);
  }
  // TASK 0.5 end
}

}  // namespace ag::kernels::scalar

#define AG_SOFTMAX_INSTANTIATE(NS, T)                                        \
  template void NS::softmax_rows<T>(const T*, T*, std::size_t, std::size_t); \
  template void NS::softmax_rows_backward<T>(const T*, const T*, T*, std::size_t, std::size_t);

AG_SOFTMAX_INSTANTIATE(ag::kernels::scalar, float)
AG_SOFTMAX_INSTANTIATE(ag::kernels::scalar, double)

#undef AG_SOFTMAX_INSTANTIATE
