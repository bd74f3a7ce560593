// The machine's peak: how many GFLOP/s one core reaches with fused multiply-adds alone.
#pragma once
#include <string>
#include <vector>

namespace bench {

struct Peak {
  std::string isa;  ///< "avx512", "avx2" or "sse2"
  double gflops;    ///< best over the repetitions, single thread, float32
};

/// One entry per instruction set this CPU has, widest first: a loop of independent FMAs on
/// registers only (no memory traffic), timed in thread CPU time, best of `repetitions`.
std::vector<Peak> measure_fma_peaks(int repetitions);

}  // namespace bench
