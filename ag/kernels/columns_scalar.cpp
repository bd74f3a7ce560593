// The scalar twin of columns.cpp: the reference the tests trust, and the "scalar" path.
#include <cstddef>

#include "ag/kernels/columns.hpp"

namespace ag::kernels::scalar {

template <class T>
void bias_relu_backward(const T* g, const T* y, T* g_out, T* db, std::size_t rows,
                        std::size_t cols) {
  for (std::size_t c = 0; c < cols && db; ++c) db[c] = T(0);
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t c = 0; c < cols; ++c) {
      T d = g[r * cols + c];
      if (y) {
        d = y[r * cols + c] > T(0) ? d : T(0);
        g_out[r * cols + c] = d;
      }
      if (db) db[c] += d;
    }
  }
}

template void bias_relu_backward<float>(const float*, const float*, float*, float*, std::size_t,
                                        std::size_t);
template void bias_relu_backward<double>(const double*, const double*, double*, double*,
                                         std::size_t, std::size_t);

}  // namespace ag::kernels::scalar
