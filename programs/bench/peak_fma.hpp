// The machine's peak: how many GFLOP/s one core reaches with fused multiply-adds alone.
#pragma once
#include <map>
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

/// The machine a measurement ran on, for the summaries that quote it: the CPU's model name,
/// family and model number as /proc/cpuinfo gives them ("unknown" where it does not), and the
/// number of logical CPUs.
std::map<std::string, std::string> machine();

/// The machine's load average over the last minute (/proc/loadavg), as a measurement starts:
/// how many processes wanted a core. 0 where it is not known.
double load_average();

}  // namespace bench
