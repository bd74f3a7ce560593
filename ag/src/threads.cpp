#include "ag/threads.hpp"

#include <string>

#include "ag/error.hpp"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace ag {

bool has_threads() {
#ifdef _OPENMP
  return true;
#else
  return false;
#endif
}

int max_threads() {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

void set_max_threads(int threads) {
  if (threads < 1)
    throw Error("set_max_threads: expected at least 1 thread, got " + std::to_string(threads));
#ifdef _OPENMP
  omp_set_num_threads(threads);
#endif
}

}  // namespace ag
