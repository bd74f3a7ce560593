// The register-blocked inner kernel of gemm (private to gemm.cpp).
#pragma once
#include <cstddef>

#include "ag/kernels/simd_variant.hpp"

namespace ag::kernels::AG_SIMD_NS {
namespace {

/// What is done to a tile of C after its product, in the last K slice: C = relu(C + bias).
template <class T>
struct Epilogue {
  const T* bias = nullptr;  ///< the bias of the tile's first column, or null for none
  bool relu = false;
};

/// C[MR, NR] = alpha * Ap * Bp + beta * C, then the epilogue, where NR = kVectors * kWidth<T>,
/// Ap is a packed A micro-panel [MR, depth] with value (r, p) at
/// a[r * a_row_stride + p * a_depth_stride], and Bp a packed, 64-byte aligned B micro-panel
/// [depth, NR] (see gemm.cpp). C has row stride ldc; with beta == 0 it is not read.
/// The bias is added after alpha and beta (gemm_batched has alpha = 1: no multiply-add can
/// fuse the addition with the product, so it rounds as a separate addition would).
/// The MR x kVectors accumulators live in registers for the whole depth loop: each step
/// loads one row of Bp (kVectors vectors), broadcasts each of the MR values of Ap in turn
/// and issues MR * kVectors independent FMAs.
template <class T, std::size_t MR, std::size_t kVectors>
inline void microkernel(std::size_t depth, const T* __restrict a, std::size_t a_row_stride,
                        std::size_t a_depth_stride, const T* __restrict b, T alpha, T beta,
                        T* __restrict c, std::size_t ldc, Epilogue<T> epilogue) {
  using V = Batch<T>;
  constexpr std::size_t W = V::size;
  constexpr std::size_t NR = kVectors * W;

  // Fetch the C tile now so that its cache misses overlap the depth loop rather than
  // stalling the final update (C is often too large for L2 when K is cut into slices).
#pragma GCC unroll 16
  for (std::size_t r = 0; r < MR; ++r) {
    __builtin_prefetch(c + r * ldc, 1);
    __builtin_prefetch(c + r * ldc + NR - 1, 1);
  }

  V acc[MR][kVectors];
#pragma GCC unroll 16
  for (std::size_t r = 0; r < MR; ++r)
#pragma GCC unroll 16
    for (std::size_t v = 0; v < kVectors; ++v) acc[r][v] = V(T(0));

  const T* a_row[MR];
#pragma GCC unroll 16
  for (std::size_t r = 0; r < MR; ++r) a_row[r] = a + r * a_row_stride;

  // [depth-loop]
  for (std::size_t p = 0, a_offset = 0; p < depth; ++p, a_offset += a_depth_stride) {
    V b_row[kVectors];
#pragma GCC unroll 16
    for (std::size_t v = 0; v < kVectors; ++v) b_row[v] = V::load_aligned(b + v * W);
#pragma GCC unroll 16
    for (std::size_t r = 0; r < MR; ++r) {
      const V a_value(a_row[r][a_offset]);
#pragma GCC unroll 16
      for (std::size_t v = 0; v < kVectors; ++v)
        acc[r][v] = compat::fma(a_value, b_row[v], acc[r][v]);
    }
    b += NR;
  }
  // [depth-loop]

  const V alpha_v(alpha);
  const V beta_v(beta);
#pragma GCC unroll 16
  for (std::size_t r = 0; r < MR; ++r) {
    T* c_row = c + r * ldc;
#pragma GCC unroll 16
    for (std::size_t v = 0; v < kVectors; ++v) {
      V result = alpha_v * acc[r][v];
      // beta == 0 must not read C: it may hold NaN, and 0 * NaN is NaN.
      if (beta != T(0)) result = compat::fma(beta_v, V::load_unaligned(c_row + v * W), result);
      if (epilogue.bias) result = result + V::load_unaligned(epilogue.bias + v * W);
      // select, not max: as kernels::relu, a NaN is passed on rather than turned into 0
      if (epilogue.relu) result = xsimd::select(result < V(T(0)), V(T(0)), result);
      result.store_unaligned(c_row + v * W);
    }
  }
}

}  // namespace
}  // namespace ag::kernels::AG_SIMD_NS
