// The scalar twins of the layer-norm kernels: serial, the textbook formulas written out, the
// reference for tests and the "scalar" SIMD path. Compiled once, for the baseline target.
#include <cmath>
#include <cstddef>

#include "ag/kernels/layernorm.hpp"

namespace ag::kernels::scalar {

template <class T>
void layernorm_rows(const T* x, const T* gamma, const T* beta, T* y, T* mean, T* rstd,
                    std::size_t rows, std::size_t cols, T eps) {
  for (std::size_t r = 0; r < rows; ++r) {
    const T* xr = x + r * cols;
    T* yr = y + r * cols;
    T s = T(0);
    for (std::size_t j = 0; j < cols; ++j) s += xr[j];
    const T m = cols ? s / T(cols) : T(0);
    T q = T(0);
    for (std::size_t j = 0; j < cols; ++j) q += (xr[j] - m) * (xr[j] - m);
    const T var = cols ? q / T(cols) : T(0);
    const T rs = T(1) / std::sqrt(var + eps);
    for (std::size_t j = 0; j < cols; ++j) yr[j] = (xr[j] - m) * rs * gamma[j] + beta[j];
    mean[r] = m;
    rstd[r] = rs;
  }
}

template <class T>
void layernorm_rows_backward(const T* x, const T* gamma, const T* mean, const T* rstd, const T* dy,
                             T* dx, T* dgamma, T* dbeta, std::size_t rows, std::size_t cols) {
  for (std::size_t r = 0; r < rows; ++r) {
    if (cols == 0) continue;
    const T* xr = x + r * cols;
    const T* dyr = dy + r * cols;
    T* dxr = dx + r * cols;
    T sg = T(0), sgx = T(0);
    for (std::size_t j = 0; j < cols; ++j) {
      const T g = dyr[j] * gamma[j];
      const T xhat = (xr[j] - mean[r]) * rstd[r];
      sg += g;
      sgx += g * xhat;
    }
    const T mg = sg / T(cols);
    const T mgx = sgx / T(cols);
    for (std::size_t j = 0; j < cols; ++j) {
      const T d = dyr[j];  // read before dxr[j] is written: dx may alias dy
      const T g = d * gamma[j];
      const T xhat = (xr[j] - mean[r]) * rstd[r];
      dgamma[j] += d * xhat;
      dbeta[j] += d;
      dxr[j] = rstd[r] * (g - mg - xhat * mgx);
    }
  }
}

}  // namespace ag::kernels::scalar

#define AG_LAYERNORM_INSTANTIATE(NS, T)                                                          \
  template void NS::layernorm_rows<T>(const T*, const T*, const T*, T*, T*, T*, std::size_t,     \
                                      std::size_t, T);                                           \
  template void NS::layernorm_rows_backward<T>(const T*, const T*, const T*, const T*, const T*, \
                                               T*, T*, T*, std::size_t, std::size_t);

AG_LAYERNORM_INSTANTIATE(ag::kernels::scalar, float)
AG_LAYERNORM_INSTANTIATE(ag::kernels::scalar, double)

#undef AG_LAYERNORM_INSTANTIATE
