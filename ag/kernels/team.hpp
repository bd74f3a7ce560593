// The OpenMP team a kernel runs on, asked in one place so that a build without OpenMP
// (the macos-like preset, WebAssembly) compiles the same kernels as one team of one thread.
// Every kernel splits its work so that the result does not depend on the team's size.
#pragma once
#include <cstddef>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "ag/kernels/simd_variant.hpp"

namespace ag::kernels::AG_SIMD_NS {
namespace {

/// How many threads a kernel called here may start: OpenMP's maximum (ag::set_max_threads),
/// or 1 inside a parallel region already (a batch of products each on its own thread) and
/// without OpenMP.
inline int threads_available() {
#ifdef _OPENMP
  return omp_in_parallel() ? 1 : omp_get_max_threads();
#else
  return 1;
#endif
}

/// This thread's index in the innermost parallel region (0 outside one).
inline int team_member() {
#ifdef _OPENMP
  return omp_get_thread_num();
#else
  return 0;
#endif
}

/// The number of threads of the innermost parallel region (1 outside one).
inline int team_size() {
#ifdef _OPENMP
  return omp_get_num_threads();
#else
  return 1;
#endif
}

/// Member `member` of a team of `size`'s even share of `count` items: [first, end).
struct Share {
  std::size_t first, end;
};
inline Share share_of(std::size_t count, std::size_t member, std::size_t size) {
  return {count * member / size, count * (member + 1) / size};
}

}  // namespace
}  // namespace ag::kernels::AG_SIMD_NS
