// Which SIMD path the kernels run on: chosen once, at the first kernel call, for the CPU the
// program runs on (the widest it has), unless the environment variable PE_SIMD names a
// path (avx512, avx2, sse2, neon64 or wasm, or scalar for the scalar twins).
#pragma once
#include <cstddef>
#include <stdexcept>

namespace ag::kernels {

/// What PE_SIMD asked for when it names a path of this build that this CPU cannot run
/// (a name the build does not know is a plain std::runtime_error).
struct SimdPathUnavailable : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// The chosen path's name, e.g. "avx512". Throws if PE_SIMD names no path this CPU can run.
const char* simd_path_name();

/// Lanes of one SIMD register on the chosen path for element type T (1 for scalar).
template <class T>
std::size_t simd_width();

}  // namespace ag::kernels
