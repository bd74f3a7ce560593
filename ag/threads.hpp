// How many threads the framework's kernels use. OpenMP when the compiler has it; without it
// (Apple's clang, a WebAssembly build) everything runs on the calling thread, and since the
// work is split so that results never depend on the thread count, the numbers are the same
// bit for bit.
#pragma once
#include <cstdint>

namespace ag {

/// Below this many elements a kernel or op runs on the calling thread: waking a team costs
/// more than the work. One value for every kernel and op, so that all switch at one size.
inline constexpr std::int64_t kParallelElements = std::int64_t(1) << 15;

/// True when this build runs its kernels on OpenMP threads.
bool has_threads();

/// The number of threads a parallel kernel started from this thread would use (OpenMP's
/// omp_get_max_threads); always 1 in a build without OpenMP.
int max_threads();

/// Sets max_threads() for this thread's later kernels (omp_set_num_threads). Throws
/// ag::Error for a count below 1; in a build without OpenMP any count >= 1 is accepted
/// and the kernels still run on one thread.
void set_max_threads(int threads);

}  // namespace ag
