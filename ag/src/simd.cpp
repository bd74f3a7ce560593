#include "ag/simd.hpp"

#include "ag/kernels/dispatch.hpp"

namespace ag {

const char* simd_path_name() { return kernels::simd_path_name(); }

}  // namespace ag
