// Gathers the kernels of one instruction set into its table (compiled once per set, like
// the kernels themselves).
#include "ag/kernels/simd_variant.hpp"

namespace ag::kernels::AG_SIMD_NS {

SimdPath make_path() {
  SimdPath path{};
  path.name = AG_SIMD_PATH_NAME;
  fill_elementwise(path);
  fill_softmax(path);
  fill_layernorm(path);
  fill_gemm(path);
  fill_columns(path);
  path.f32.width = kWidth<float>;
  path.f64.width = kWidth<double>;
  return path;
}

}  // namespace ag::kernels::AG_SIMD_NS
