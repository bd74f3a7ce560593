// The scalar twins of the elementwise kernels: the plainest possible loops, the reference
// the tests trust, and the "scalar" SIMD path (PE_SIMD=scalar). Compiled once, for the
// baseline target.
#include <cmath>
#include <cstddef>

#include "ag/kernels/elementwise.hpp"

namespace ag::kernels::scalar {

template <class T>
void add(const T* a, const T* b, T* out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
}

template <class T>
void sub(const T* a, const T* b, T* out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = a[i] - b[i];
}

template <class T>
void mul(const T* a, const T* b, T* out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = a[i] * b[i];
}

template <class T>
void div(const T* a, const T* b, T* out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = a[i] / b[i];
}

template <class T>
void axpy(T alpha, const T* x, T* y, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) y[i] += alpha * x[i];
}

template <class T>
void exp(const T* a, T* out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = std::exp(a[i]);
}

template <class T>
void relu(const T* a, T* out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = a[i] < T(0) ? T(0) : a[i];
}

template <class T>
void relu_backward(const T* a, const T* g, T* out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = a[i] > T(0) ? g[i] : T(0);
}

}  // namespace ag::kernels::scalar

#define AG_ELEMENTWISE_INSTANTIATE(T)                                             \
  template void ag::kernels::scalar::add<T>(const T*, const T*, T*, std::size_t); \
  template void ag::kernels::scalar::sub<T>(const T*, const T*, T*, std::size_t); \
  template void ag::kernels::scalar::mul<T>(const T*, const T*, T*, std::size_t); \
  template void ag::kernels::scalar::div<T>(const T*, const T*, T*, std::size_t); \
  template void ag::kernels::scalar::axpy<T>(T, const T*, T*, std::size_t);       \
  template void ag::kernels::scalar::exp<T>(const T*, T*, std::size_t);           \
  template void ag::kernels::scalar::relu<T>(const T*, T*, std::size_t);          \
  template void ag::kernels::scalar::relu_backward<T>(const T*, const T*, T*, std::size_t);

AG_ELEMENTWISE_INSTANTIATE(float)
AG_ELEMENTWISE_INSTANTIATE(double)

#undef AG_ELEMENTWISE_INSTANTIATE
