// The one place where the xsimd releases a reader may have (8.1 to 14.x) differ for us.
//
// Readers build against whatever their system ships: Debian 12 has 8.1, Ubuntu 24.04 12.1,
// Debian 13 and Fedora 13.2, Ubuntu 26.04 and Homebrew 14.0. The kernels are written once
// against the names below; only this header knows which release spelled what.
//
//   - 9.0 renamed the horizontal sum `hadd` to `reduce_add`, and the releases add the lanes
//     in different orders (see `reduce_add` below, which adds them in one order for all).
//   - 13.2 refuses, at compile time, AVX-512DQ without AVX-512CD (the AVX-512 variant's
//     flags in ag/CMakeLists.txt therefore name F, CD and DQ, and dispatch.cpp asks
//     the CPU for all three).
//   - 14.0 renamed the architecture-independent fallback `generic` to `common`; nothing here
//     names either, so the rename costs nothing.
//
//   - 8.1's AVX-512 fma multiplies and adds (two roundings); later releases fuse: `fma`
//     below fuses on every release, and kernels/simd_exp.hpp replaces xsimd's exp, whose
//     AVX-512 version inherits the difference.
//
// And two things every release does that the kernels must not inherit:
//   - Float division on arm64 (neon64) is a reciprocal estimate refined by Newton steps,
//     not the IEEE quotient: `divide` uses the instruction that divides (vdivq_f32).
//   - The arm64 architecture calls itself "arm64+neon"; the book's path names are stable
//     words (`path_name`), the ones PE_SIMD takes.
#pragma once
#include <cstddef>
#include <string_view>
#include <type_traits>
#include <xsimd/xsimd.hpp>

#if !defined(XSIMD_VERSION_MAJOR)
#error "xsimd_compat.hpp: this xsimd does not say its version (XSIMD_VERSION_MAJOR)"
#endif

namespace ag::kernels::compat {
// Internal linkage: each kernel variant compiles its own copy, and none of them may reach
// the linker under a shared name (dispatch.cpp, "the one-definition trap").
namespace {

/// The sum of the lanes of a batch, in one fixed order whatever the xsimd release. (The
/// releases disagree: for 16 floats 8.1 adds 256-bit halves, 12.1 four 128-bit quarters,
/// 14.x calls the compiler's _mm512_reduce_add_ps; the same training then ended with other
/// last bits, and near-chance accuracies moved by a tenth of a percent.) The order is 8.1's
/// on x86, which the book's results were computed with: fold the upper half of the register
/// onto the lower down to 128 bits; four floats left of a wider register then add as
/// neighbours (AVX's hadd), four of a 128-bit register as halves again.
template <class T, class A>
inline T reduce_add(const xsimd::batch<T, A>& v) {
  constexpr std::size_t W = xsimd::batch<T, A>::size;
  constexpr std::size_t k128 = 16 / sizeof(T);  // lanes in 128 bits: 4 floats, 2 doubles
  T lane[W];
  v.store_unaligned(lane);
  if constexpr (W == 1) {
    return lane[0];
  } else if constexpr (W == 2) {
    return lane[0] + lane[1];
  } else {
    for (std::size_t n = W; n > k128 && n > 2; n /= 2)
      for (std::size_t i = 0; i < n / 2; ++i) lane[i] = lane[i + n / 2] + lane[i];
    if constexpr (k128 == 4 && W > 4) return (lane[0] + lane[1]) + (lane[2] + lane[3]);
    if constexpr (k128 == 4) return (lane[0] + lane[2]) + (lane[1] + lane[3]);
    return lane[0] + lane[1];
  }
}

/// x * y + z with one rounding, on every release: xsimd 8.1's AVX-512 fma is a multiply and
/// an add (two roundings); 12 and later use the instruction, as this does on every release.
template <class T, class A>
inline xsimd::batch<T, A> fma(const xsimd::batch<T, A>& x, const xsimd::batch<T, A>& y,
                              const xsimd::batch<T, A>& z) {
#if defined(__AVX512F__)
  if constexpr (std::is_base_of_v<xsimd::avx512f, A>) {
    if constexpr (std::is_same_v<T, float>)
      return xsimd::batch<T, A>(_mm512_fmadd_ps(x, y, z));
    else
      return xsimd::batch<T, A>(_mm512_fmadd_pd(x, y, z));
  }
#endif
  return xsimd::fma(x, y, z);
}

/// a / b lane by lane, correctly rounded on every architecture (the scalar twin's quotient).
template <class T, class A>
inline xsimd::batch<T, A> divide(const xsimd::batch<T, A>& a, const xsimd::batch<T, A>& b) {
#if defined(__aarch64__) && defined(__ARM_NEON)
  if constexpr (std::is_same_v<T, float> && std::is_base_of_v<xsimd::neon64, A>)
    return xsimd::batch<T, A>(vdivq_f32(a, b));
#endif
  return a / b;
}

/// The book's name of an xsimd architecture: "neon64" for what xsimd calls "arm64+neon",
/// otherwise xsimd's own ("sse2", "wasm", ...).
template <class A>
constexpr const char* path_name() {
  return std::string_view(A::name()) == "arm64+neon" ? "neon64" : A::name();
}

}  // namespace
}  // namespace ag::kernels::compat
