// The one place that chooses the SIMD register type for the kernels of one instruction set.
//
// The kernel sources (gemm.cpp, elementwise.cpp, softmax.cpp, layernorm.cpp, columns.cpp,
// path.cpp) are
// compiled once per instruction set, each time with its own -m flags and AG_SIMD_VARIANT
// (see ag/CMakeLists.txt); dispatch.cpp picks one set at start-up. Everything a
// variant defines lives in its own namespace, ag::kernels::AG_SIMD_NS, and most of it in an
// anonymous namespace inside that: no function compiled for AVX-512 may share a linker name
// with one the rest of the program calls (see dispatch.cpp, "the one-definition trap").
// In WebAssembly (the wasm preset, compiled with -msimd128) the baseline variant is xsimd's
// SIMD128 architecture, the path named "wasm".
#pragma once
#include "ag/kernels/kernel_table.hpp"
#include "ag/kernels/xsimd_compat.hpp"

#if !defined(AG_SIMD_VARIANT)
#error "simd.hpp belongs to the per-instruction-set kernel sources: define AG_SIMD_VARIANT"
#endif

// [variants]
// 0: the compiler's target as given (SSE2 on x86-64, NEON on arm64, or PE_ARCH's choice).
#if AG_SIMD_VARIANT == 0
#define AG_SIMD_NS baseline
#define AG_SIMD_PATH_NAME compat::path_name<xsimd::default_arch>()
#define AG_SIMD_ARCH xsimd::default_arch
// 1: AVX2 + FMA (-mavx2 -mfma).
#elif AG_SIMD_VARIANT == 1
#define AG_SIMD_NS avx2
#define AG_SIMD_PATH_NAME "avx2"
#define AG_SIMD_ARCH xsimd::fma3<xsimd::avx2>
// 2: AVX-512 F, CD and DQ (-mavx512f -mavx512cd -mavx512dq -mavx2 -mfma): 32 registers of
// 512 bits. xsimd 8.1 uses a DQ instruction in its avx512f horizontal add, and xsimd 13.2
// and later refuse DQ without CD (xsimd_compat.hpp); every AVX-512 CPU since Skylake has all
// three.
#elif AG_SIMD_VARIANT == 2
#define AG_SIMD_NS avx512
#define AG_SIMD_PATH_NAME "avx512"
#define AG_SIMD_ARCH xsimd::avx512f
#else
#error "unknown AG_SIMD_VARIANT"
#endif
// [variants]

namespace ag::kernels::AG_SIMD_NS {

// [batch]
template <class T>
using Batch = xsimd::batch<T, AG_SIMD_ARCH>;

template <class T>
inline constexpr std::size_t kWidth = Batch<T>::size;
// [batch]

// Each kernel source fills its entries of the path's table (the only names it exports).
void fill_elementwise(SimdPath& path);
void fill_softmax(SimdPath& path);
void fill_layernorm(SimdPath& path);
void fill_gemm(SimdPath& path);
void fill_columns(SimdPath& path);

/// The whole table of this instruction set (path.cpp). Call it only on a CPU that has it.
SimdPath make_path();

}  // namespace ag::kernels::AG_SIMD_NS
