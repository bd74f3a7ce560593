// Run-time dispatch: the kernels are compiled once per instruction set (simd.hpp), and the
// functions declared in elementwise.hpp, softmax.hpp, layernorm.hpp, gemm.hpp and columns.hpp
// forward to the table of the path chosen here, once, at the first call.
//
// The CPU is asked through the compiler's __builtin_cpu_supports, which also checks that the
// operating system saves the wide registers. xsimd 8's available_architectures() is not
// used: in Debian's 8.1.0 it reads the AVX bit after a later CPUID call has overwritten the
// register (it reports avx = 0 on AVX-512 machines), and it never asks the OS (XGETBV).
//
// The one-definition trap: an inline function or template instantiated in an AVX-512
// translation unit (std::copy_n<float*...>, say) is emitted there as a weak symbol, and the
// linker keeps ONE copy of each weak symbol for the whole program. If it kept the AVX-512
// copy, baseline code calling std::copy_n would execute AVX-512 instructions: SIGILL on an
// older CPU. So every function of a variant lives in its own namespace (mostly an anonymous
// one) and a variant exports nothing but its ag::kernels::<variant>:: names and xsimd
// instantiations whose arch parameter is the variant's own; the tests
// KernelVariantExportsOnlyItsOwnNames.<variant> (ag/tests/kernels/CMakeLists.txt) check the
// object files for it.
#include "ag/kernels/dispatch.hpp"

#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "ag/kernels/columns.hpp"
#include "ag/kernels/elementwise.hpp"
#include "ag/kernels/gemm.hpp"
#include "ag/kernels/kernel_table.hpp"
#include "ag/kernels/layernorm.hpp"
#include "ag/kernels/softmax.hpp"

namespace ag::kernels {

// Each compiled variant's table (path.cpp); AG_SIMD_HAVE_* come from ag/CMakeLists.txt.
namespace baseline {
SimdPath make_path();
}
#if AG_SIMD_HAVE_AVX2
namespace avx2 {
SimdPath make_path();
}
#endif
#if AG_SIMD_HAVE_AVX512
namespace avx512 {
SimdPath make_path();
}
#endif

namespace {

template <class T>
void fill_scalar(KernelTable<T>& t) {
  t.add = scalar::add<T>;
  t.sub = scalar::sub<T>;
  t.mul = scalar::mul<T>;
  t.div = scalar::div<T>;
  t.axpy = scalar::axpy<T>;
  t.exp = scalar::exp<T>;
  t.relu = scalar::relu<T>;
  t.relu_backward = scalar::relu_backward<T>;
  t.softmax_rows = scalar::softmax_rows<T>;
  t.softmax_rows_backward = scalar::softmax_rows_backward<T>;
  t.layernorm_rows = scalar::layernorm_rows<T>;
  t.layernorm_rows_backward = scalar::layernorm_rows_backward<T>;
  t.gemm = scalar::gemm<T>;
  t.gemm_batched = scalar::gemm_batched<T>;
  t.bias_relu_backward = scalar::bias_relu_backward<T>;
  t.width = 1;
}

SimdPath scalar_path() {
  SimdPath path{};
  path.name = "scalar";
  fill_scalar(path.f32);
  fill_scalar(path.f64);
  return path;
}

/// A path this build has: its name, whether this CPU can run it, and how to build its table.
struct Candidate {
  std::string name;
  bool runs_here;
  SimdPath (*make)();
};

// [candidates]
// What this CPU can run beyond the baseline. Asked through the compiler's
// __builtin_cpu_supports (GCC and clang, x86 only), which also checks that the operating system
// saves the wide registers. On any other CPU (arm64, where NEON is the baseline itself, or
// WebAssembly) there is nothing to ask: both answers stay false and the baseline runs.
struct CpuFeatures {
  bool avx2_fma = false;
  bool avx512 = false;  // F, CD and DQ: what the AVX-512 variant is compiled with (simd.hpp)
};

CpuFeatures cpu_features() {
  CpuFeatures cpu;
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  cpu.avx2_fma = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  cpu.avx512 = cpu.avx2_fma && __builtin_cpu_supports("avx512f") &&
               __builtin_cpu_supports("avx512cd") && __builtin_cpu_supports("avx512dq");
#endif
  return cpu;
}

/// Widest first: the first one that runs here is the default.
std::vector<Candidate> candidates() {
  std::vector<Candidate> list;
  [[maybe_unused]] const CpuFeatures cpu = cpu_features();
#if AG_SIMD_HAVE_AVX512
  list.push_back({"avx512", cpu.avx512, avx512::make_path});
#endif
#if AG_SIMD_HAVE_AVX2
  list.push_back({"avx2", cpu.avx2_fma, avx2::make_path});
#endif
  // The baseline is whatever the whole program is compiled for, so it runs wherever the
  // program does. Its name is only known from its table.
  list.push_back({baseline::make_path().name, true, baseline::make_path});
  list.push_back({"scalar", true, scalar_path});
  return list;
}
// [candidates]

SimdPath choose_path() {
  const std::vector<Candidate> list = candidates();
  const char* forced = std::getenv("PE_SIMD");
  if (forced == nullptr || *forced == '\0') {
    for (const Candidate& c : list)
      if (c.runs_here) return c.make();
  }
  std::string names, runnable;
  for (const Candidate& c : list) {
    if (c.name == forced) {
      if (c.runs_here) return c.make();
      for (const Candidate& r : list)
        if (r.runs_here) runnable += (runnable.empty() ? "" : ", ") + r.name;
      throw SimdPathUnavailable("PE_SIMD=" + c.name +
                                ": this CPU cannot run that path (it can run " + runnable + ")");
    }
    names += (names.empty() ? "" : ", ") + c.name;
  }
  throw std::runtime_error(std::string("PE_SIMD=") + forced +
                           ": no such SIMD path in this build (expected one of " + names + ")");
}

// [active]
const SimdPath& active() {
  static const SimdPath path = choose_path();
  return path;
}
// [active]

template <class T>
const KernelTable<T>& table() {
  return active().table<T>();
}

}  // namespace

const char* simd_path_name() { return active().name; }

template <class T>
std::size_t simd_width() {
  return table<T>().width;
}

// The public kernels: one indirect call each, to the chosen path.

template <class T>
void add(const T* a, const T* b, T* out, std::size_t n) {
  table<T>().add(a, b, out, n);
}
template <class T>
void sub(const T* a, const T* b, T* out, std::size_t n) {
  table<T>().sub(a, b, out, n);
}
template <class T>
void mul(const T* a, const T* b, T* out, std::size_t n) {
  table<T>().mul(a, b, out, n);
}
template <class T>
void div(const T* a, const T* b, T* out, std::size_t n) {
  table<T>().div(a, b, out, n);
}
template <class T>
void axpy(T alpha, const T* x, T* y, std::size_t n) {
  table<T>().axpy(alpha, x, y, n);
}
template <class T>
void exp(const T* a, T* out, std::size_t n) {
  table<T>().exp(a, out, n);
}
template <class T>
void relu(const T* a, T* out, std::size_t n) {
  table<T>().relu(a, out, n);
}
template <class T>
void relu_backward(const T* a, const T* g, T* out, std::size_t n) {
  table<T>().relu_backward(a, g, out, n);
}
template <class T>
void softmax_rows(const T* x, T* y, std::size_t rows, std::size_t cols) {
  table<T>().softmax_rows(x, y, rows, cols);
}
template <class T>
void softmax_rows_backward(const T* y, const T* dy, T* dx, std::size_t rows, std::size_t cols) {
  table<T>().softmax_rows_backward(y, dy, dx, rows, cols);
}
template <class T>
void layernorm_rows(const T* x, const T* gamma, const T* beta, T* y, T* mean, T* rstd,
                    std::size_t rows, std::size_t cols, T eps) {
  table<T>().layernorm_rows(x, gamma, beta, y, mean, rstd, rows, cols, eps);
}
template <class T>
void layernorm_rows_backward(const T* x, const T* gamma, const T* mean, const T* rstd, const T* dy,
                             T* dx, T* dgamma, T* dbeta, std::size_t rows, std::size_t cols) {
  table<T>().layernorm_rows_backward(x, gamma, mean, rstd, dy, dx, dgamma, dbeta, rows, cols);
}
// [forward-gemm]
template <class T>
void gemm(bool trans_a, bool trans_b, std::size_t M, std::size_t N, std::size_t K, T alpha,
          const T* A, std::size_t lda, const T* B, std::size_t ldb, T beta, T* C, std::size_t ldc) {
  table<T>().gemm(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}
// [forward-gemm]
template <class T>
void gemm_batched(const BatchedGemm<T>& p) {
  table<T>().gemm_batched(p);
}
template <class T>
void bias_relu_backward(const T* g, const T* y, T* g_out, T* db, std::size_t rows,
                        std::size_t cols) {
  table<T>().bias_relu_backward(g, y, g_out, db, rows, cols);
}

#define AG_DISPATCH_INSTANTIATE(T)                                                               \
  template std::size_t simd_width<T>();                                                          \
  template void add<T>(const T*, const T*, T*, std::size_t);                                     \
  template void sub<T>(const T*, const T*, T*, std::size_t);                                     \
  template void mul<T>(const T*, const T*, T*, std::size_t);                                     \
  template void div<T>(const T*, const T*, T*, std::size_t);                                     \
  template void axpy<T>(T, const T*, T*, std::size_t);                                           \
  template void exp<T>(const T*, T*, std::size_t);                                               \
  template void relu<T>(const T*, T*, std::size_t);                                              \
  template void relu_backward<T>(const T*, const T*, T*, std::size_t);                           \
  template void softmax_rows<T>(const T*, T*, std::size_t, std::size_t);                         \
  template void softmax_rows_backward<T>(const T*, const T*, T*, std::size_t, std::size_t);      \
  template void layernorm_rows<T>(const T*, const T*, const T*, T*, T*, T*, std::size_t,         \
                                  std::size_t, T);                                               \
  template void layernorm_rows_backward<T>(const T*, const T*, const T*, const T*, const T*, T*, \
                                           T*, T*, std::size_t, std::size_t);                    \
  template void gemm<T>(bool, bool, std::size_t, std::size_t, std::size_t, T, const T*,          \
                        std::size_t, const T*, std::size_t, T, T*, std::size_t);                 \
  template void gemm_batched<T>(const BatchedGemm<T>&);                                          \
  template void bias_relu_backward<T>(const T*, const T*, T*, T*, std::size_t, std::size_t);

AG_DISPATCH_INSTANTIATE(float)
AG_DISPATCH_INSTANTIATE(double)

#undef AG_DISPATCH_INSTANTIATE

}  // namespace ag::kernels
