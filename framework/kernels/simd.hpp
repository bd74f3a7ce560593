// The one place that chooses the SIMD register type for every kernel.
#pragma once
#include <xsimd/xsimd.hpp>

namespace ag::kernels {

// The architecture is fixed at compile time (see cmake/Flags.cmake): xsimd's runtime
// dispatch is not used, because its CPU detection is unreliable on these machines.
template <class T>
using Batch = xsimd::batch<T, xsimd::default_arch>;

template <class T>
inline constexpr std::size_t kWidth = Batch<T>::size;

}  // namespace ag::kernels
