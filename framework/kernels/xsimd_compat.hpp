// The one place where the xsimd releases a reader may have (8.1 to 14.x) differ for us.
//
// Readers build against whatever their system ships: Debian 12 has 8.1, Ubuntu 24.04 12.1,
// Debian 13 and Fedora 13.2, Ubuntu 26.04 and Homebrew 14.0. The kernels are written once
// against the names below; only this header knows which release spelled what.
//
//   - 9.0 renamed the horizontal sum `hadd` to `reduce_add`.
//   - 13.2 refuses, at compile time, AVX-512DQ without AVX-512CD (the AVX-512 variant's
//     flags in framework/CMakeLists.txt therefore name F, CD and DQ, and dispatch.cpp asks
//     the CPU for all three).
//   - 14.0 renamed the architecture-independent fallback `generic` to `common`; nothing here
//     names either, so the rename costs nothing.
//
// And two things every release does that the kernels must not inherit:
//   - Float division on arm64 (neon64) is a reciprocal estimate refined by Newton steps,
//     not the IEEE quotient: `divide` uses the instruction that divides (vdivq_f32).
//   - The arm64 architecture calls itself "arm64+neon"; the book's path names are stable
//     words (`path_name`), the ones PE_SIMD takes.
#pragma once
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

/// The sum of the lanes of a batch (hadd before xsimd 9, reduce_add since).
template <class T, class A>
inline T reduce_add(const xsimd::batch<T, A>& v) {
#if XSIMD_VERSION_MAJOR >= 9
  return xsimd::reduce_add(v);
#else
  return xsimd::hadd(v);
#endif
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
