// Elementwise loops: a SIMD loop over full batches, then a scalar tail for the last
// n % kWidth<T> elements. Every loop reads element i of its inputs before writing element i
// of `out`, so `out` may alias any input (in-place updates are how the autograd code uses
// them). These loops are memory-bound; a large array is cut into one piece per thread
// (in_pieces), each piece starting on a whole number of cache lines, so that every element
// takes the same path (SIMD body or scalar tail) as in one serial pass: the same bits at any
// thread count.
#include <cmath>
#include <cstddef>
#include <type_traits>

#include "ag/kernels/simd_exp.hpp"
#include "ag/kernels/simd_variant.hpp"
#include "ag/kernels/team.hpp"
#include "ag/threads.hpp"

namespace ag::kernels::AG_SIMD_NS {
namespace {

// Below ag::kParallelElements (ag/threads.hpp) a call runs on the calling thread.
constexpr auto kParallelThreshold = std::size_t(ag::kParallelElements);

/// Calls pass(first, count) over [0, n), on all available threads when n is large: each
/// thread gets one piece, cut at a multiple of 64 elements (whole cache lines, whole vectors),
/// and the last piece ends with the n % W elements of the scalar tail.
template <class Pass>
void in_pieces(std::size_t n, Pass pass) {
  constexpr std::size_t kGrain = 64;
  const int threads = n >= kParallelThreshold ? threads_available() : 1;
  if (threads <= 1) {
    pass(std::size_t(0), n);
    return;
  }
#pragma omp parallel num_threads(threads)
  {
    const Share mine = share_of(n / kGrain, std::size_t(team_member()), std::size_t(team_size()));
    const std::size_t first = mine.first * kGrain;
    const std::size_t end = mine.end * kGrain == n / kGrain * kGrain ? n : mine.end * kGrain;
    if (end > first) pass(first, end - first);
  }
}

// out[i] = op(a[i], b[i]). `op` is a generic lambda so the same expression serves the
// batch body and the scalar tail, which keeps the two from drifting apart.
template <class T, class Op>
inline void binary_map(const T* a, const T* b, T* out, std::size_t n, Op op) {
  constexpr std::size_t W = kWidth<T>;
  const std::size_t body = n - n % W;
  std::size_t i = 0;
  for (; i < body; i += W) {
    const Batch<T> x = Batch<T>::load_unaligned(a + i);
    const Batch<T> y = Batch<T>::load_unaligned(b + i);
    op(x, y).store_unaligned(out + i);
  }
  for (; i < n; ++i) out[i] = op(a[i], b[i]);
}

/// binary_map over [0, n) in pieces (in_pieces).
template <class T, class Op>
void binary_pass(const T* a, const T* b, T* out, std::size_t n, Op op) {
  in_pieces(n, [=](std::size_t first, std::size_t count) {
    binary_map(a + first, b + first, out + first, count, op);
  });
}

template <class T>
void add(const T* a, const T* b, T* out, std::size_t n) {
  binary_pass(a, b, out, n, [](auto x, auto y) { return x + y; });
}

template <class T>
void sub(const T* a, const T* b, T* out, std::size_t n) {
  binary_pass(a, b, out, n, [](auto x, auto y) { return x - y; });
}

template <class T>
void mul(const T* a, const T* b, T* out, std::size_t n) {
  binary_pass(a, b, out, n, [](auto x, auto y) { return x * y; });
}

template <class T>
void div(const T* a, const T* b, T* out, std::size_t n) {
  // A true division, not a * (1 / b): the reciprocal would round twice (compat::divide: also
  // on arm64, where xsimd's float division is an estimate).
  binary_pass(a, b, out, n, [](auto x, auto y) {
    if constexpr (std::is_same_v<decltype(x), T>)
      return x / y;
    else
      return compat::divide(x, y);
  });
}

template <class T>
void axpy_piece(T alpha, const T* x, T* y, std::size_t n) {
  constexpr std::size_t W = kWidth<T>;
  const std::size_t body = n - n % W;
  const Batch<T> va(alpha);
  std::size_t i = 0;
  // One fused multiply-add per lane: one rounding instead of two, and one instruction.
  for (; i < body; i += W) {
    compat::fma(va, Batch<T>::load_unaligned(x + i), Batch<T>::load_unaligned(y + i))
        .store_unaligned(y + i);
  }
  // std::fma in the tail so that the tail rounds like the body.
  for (; i < n; ++i) y[i] = std::fma(alpha, x[i], y[i]);
}

template <class T>
void axpy(T alpha, const T* x, T* y, std::size_t n) {
  in_pieces(n, [=](std::size_t first, std::size_t count) {
    axpy_piece(alpha, x + first, y + first, count);
  });
}

template <class T>
void exp_piece(const T* a, T* out, std::size_t n) {
  constexpr std::size_t W = kWidth<T>;
  const std::size_t body = n - n % W;
  std::size_t i = 0;
  // simd_exp.hpp: a Cody-Waite range reduction and a Taylor polynomial, within a few units in
  // the last place of std::exp, the same on every xsimd release.
  for (; i < body; i += W) simd_exp(Batch<T>::load_unaligned(a + i)).store_unaligned(out + i);
  for (; i < n; ++i) out[i] = std::exp(a[i]);
}

template <class T>
void exp(const T* a, T* out, std::size_t n) {
  in_pieces(
      n, [=](std::size_t first, std::size_t count) { exp_piece(a + first, out + first, count); });
}

template <class T>
void relu_piece(const T* a, T* out, std::size_t n) {
  constexpr std::size_t W = kWidth<T>;
  const std::size_t body = n - n % W;
  const Batch<T> zero(T(0));
  std::size_t i = 0;
  // select(x < 0, 0, x) rather than max(x, 0): the x86 max instruction returns its second
  // operand when either is NaN, so max would silently turn a NaN into 0 (or not, depending
  // on operand order). With the comparison, a NaN fails `x < 0` and is passed through.
  for (; i < body; i += W) {
    const Batch<T> x = Batch<T>::load_unaligned(a + i);
    xsimd::select(x < zero, zero, x).store_unaligned(out + i);
  }
  for (; i < n; ++i) out[i] = a[i] < T(0) ? T(0) : a[i];
}

template <class T>
void relu(const T* a, T* out, std::size_t n) {
  in_pieces(
      n, [=](std::size_t first, std::size_t count) { relu_piece(a + first, out + first, count); });
}

template <class T>
void relu_backward_piece(const T* a, const T* g, T* out, std::size_t n) {
  constexpr std::size_t W = kWidth<T>;
  const std::size_t body = n - n % W;
  const Batch<T> zero(T(0));
  std::size_t i = 0;
  // The gradient flows only where the input was strictly positive (the subgradient at 0 is
  // taken to be 0, as in PyTorch).
  for (; i < body; i += W) {
    const Batch<T> x = Batch<T>::load_unaligned(a + i);
    const Batch<T> dy = Batch<T>::load_unaligned(g + i);
    xsimd::select(x > zero, dy, zero).store_unaligned(out + i);
  }
  for (; i < n; ++i) out[i] = a[i] > T(0) ? g[i] : T(0);
}

template <class T>
void relu_backward(const T* a, const T* g, T* out, std::size_t n) {
  in_pieces(n, [=](std::size_t first, std::size_t count) {
    relu_backward_piece(a + first, g + first, out + first, count);
  });
}

}  // namespace

template <class T>
void fill_elementwise(KernelTable<T>& t) {
  t.add = add<T>;
  t.sub = sub<T>;
  t.mul = mul<T>;
  t.div = div<T>;
  t.axpy = axpy<T>;
  t.exp = exp<T>;
  t.relu = relu<T>;
  t.relu_backward = relu_backward<T>;
}

void fill_elementwise(SimdPath& path) {
  fill_elementwise(path.f32);
  fill_elementwise(path.f64);
}

}  // namespace ag::kernels::AG_SIMD_NS
