// Elementwise loops over contiguous arrays of n elements. `out` may alias an input.
#pragma once
#include <cstddef>

namespace ag::kernels {

template <class T>
void add(const T* a, const T* b, T* out, std::size_t n);
template <class T>
void sub(const T* a, const T* b, T* out, std::size_t n);
template <class T>
void mul(const T* a, const T* b, T* out, std::size_t n);
template <class T>
void div(const T* a, const T* b, T* out, std::size_t n);
/// y += alpha * x  (gradient accumulation)
template <class T>
void axpy(T alpha, const T* x, T* y, std::size_t n);
template <class T>
void exp(const T* a, T* out, std::size_t n);
template <class T>
void relu(const T* a, T* out, std::size_t n);
/// out = g where a > 0, else 0  (ReLU's backward)
template <class T>
void relu_backward(const T* a, const T* g, T* out, std::size_t n);

namespace scalar {
template <class T>
void add(const T* a, const T* b, T* out, std::size_t n);
template <class T>
void sub(const T* a, const T* b, T* out, std::size_t n);
template <class T>
void mul(const T* a, const T* b, T* out, std::size_t n);
template <class T>
void div(const T* a, const T* b, T* out, std::size_t n);
template <class T>
void axpy(T alpha, const T* x, T* y, std::size_t n);
template <class T>
void exp(const T* a, T* out, std::size_t n);
template <class T>
void relu(const T* a, T* out, std::size_t n);
template <class T>
void relu_backward(const T* a, const T* g, T* out, std::size_t n);
}  // namespace scalar

}  // namespace ag::kernels
