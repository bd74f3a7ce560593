#include "ag/simd.hpp"

#include "dispatch.hpp"

namespace ag {

const char* simd_path_name() { return kernels::simd_path_name(); }

}  // namespace ag
