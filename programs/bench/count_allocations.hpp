// Counts a program's heap allocations. The program that links count_allocations.cpp has its
// global operator new and delete replaced by ones that count each call and the bytes it asked
// for, then use malloc and free; only bench_train_step links it, to show what a training step
// still allocates once its tensors' buffers come from the buffer cache (ag/buffers.hpp, which
// takes them from malloc directly: they are counted there, not here).
#pragma once
#include <cstdint>

namespace bench {

/// Calls of operator new, in all its forms, since the program started, and their bytes.
struct HeapCounts {
  std::int64_t calls = 0;  ///< allocations (frees are not counted)
  std::int64_t bytes = 0;  ///< the bytes they asked for
};

/// The counts so far, over all threads. Allocations by malloc itself (C code, OpenMP's
/// runtime, aligned_alloc) are not seen.
HeapCounts heap_counts();

}  // namespace bench
