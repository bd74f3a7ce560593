// Row softmax, forward and backward. Each row is independent, so rows are split across
// OpenMP threads; inside a row the loops are SIMD over full batches with a scalar tail.
//
// Aliasing: every pass reads element i before it writes element i, and a row is finished
// before the next starts, so y may alias x (forward) and dx may alias y or dy (backward).
#include <cmath>
#include <cstddef>
#include <limits>

#include "ag/kernels/simd_exp.hpp"
#include "ag/kernels/simd_variant.hpp"
#include "ag/threads.hpp"

namespace ag::kernels::AG_SIMD_NS {
namespace {

// Below ag::kParallelElements (ag/threads.hpp) a call runs on the calling thread.
[[maybe_unused]] constexpr auto kParallelThreshold = std::size_t(ag::kParallelElements);

// Horizontal maximum of a batch. xsimd 8.1 has hadd but no reduce_max, so store the lanes
// and scan them; this runs once per row, not once per element.
template <class T>
inline T horizontal_max(const Batch<T>& v) {
  T lanes[kWidth<T>];
  v.store_unaligned(lanes);
  T m = lanes[0];
  for (std::size_t k = 1; k < kWidth<T>; ++k) m = lanes[k] > m ? lanes[k] : m;
  return m;
}

// [softmax-row]
template <class T>
void softmax_row(const T* x, T* y, std::size_t n) {
  if (n == 0) return;
  constexpr std::size_t W = kWidth<T>;
  constexpr T kNegInf = -std::numeric_limits<T>::infinity();
  const std::size_t body = n - n % W;

  // Pass 1: the row maximum. Subtracting it makes every exponent <= 0, so exp cannot
  // overflow however large the scores are; -inf entries never win the max.
  Batch<T> vmax(kNegInf);
  std::size_t i = 0;
  for (; i < body; i += W) vmax = xsimd::max(vmax, Batch<T>::load_unaligned(x + i));
  T m = horizontal_max(vmax);
  for (; i < n; ++i) m = x[i] > m ? x[i] : m;

  // A fully masked row has no distribution; say so loudly with NaN rather than invent one
  // (the naive formula would give -inf - -inf = NaN anyway, this just makes it explicit).
  if (m == kNegInf) {
    for (std::size_t j = 0; j < n; ++j) y[j] = std::numeric_limits<T>::quiet_NaN();
    return;
  }

  // Pass 2: e = exp(x - m), stored in y, and summed. exp(-inf) is exactly 0 in both simd_exp
  // and std::exp, which is what gives masked entries probability exactly 0.
  const Batch<T> vm(m);
  Batch<T> vsum(T(0));
  for (i = 0; i < body; i += W) {
    const Batch<T> e = simd_exp(Batch<T>::load_unaligned(x + i) - vm);
    e.store_unaligned(y + i);
    vsum += e;
  }
  T s = compat::reduce_add(vsum);
  for (; i < n; ++i) {
    const T e = std::exp(x[i] - m);
    y[i] = e;
    s += e;
  }

  // Pass 3: normalise. s >= 1 (the max entry contributes exp(0) = 1), so 1/s is safe; one
  // division per row and a multiply per element instead of a division per element.
  const T inv = T(1) / s;
  const Batch<T> vinv(inv);
  for (i = 0; i < body; i += W) (Batch<T>::load_unaligned(y + i) * vinv).store_unaligned(y + i);
  for (; i < n; ++i) y[i] *= inv;
}
// [softmax-row]

template <class T>
void softmax_row_backward(const T* y, const T* dy, T* dx, std::size_t n) {
  constexpr std::size_t W = kWidth<T>;
  const std::size_t body = n - n % W;

  // Pass 1: <dy, y>, with fused multiply-adds into a vector of partial sums.
  Batch<T> vdot(T(0));
  std::size_t i = 0;
  for (; i < body; i += W) {
    vdot = compat::fma(Batch<T>::load_unaligned(dy + i), Batch<T>::load_unaligned(y + i), vdot);
  }
  T dot = compat::reduce_add(vdot);
  for (; i < n; ++i) dot += dy[i] * y[i];

  // Pass 2: dx = y * (dy - <dy, y>), the softmax Jacobian-vector product without forming
  // the [cols, cols] Jacobian.
  const Batch<T> vd(dot);
  for (i = 0; i < body; i += W) {
    const Batch<T> yy = Batch<T>::load_unaligned(y + i);
    (yy * (Batch<T>::load_unaligned(dy + i) - vd)).store_unaligned(dx + i);
  }
  for (; i < n; ++i) dx[i] = y[i] * (dy[i] - dot);
}

template <class T>
void softmax_rows(const T* x, T* y, std::size_t rows, std::size_t cols) {
#pragma omp parallel for schedule(static) if (rows * cols > kParallelThreshold)
  for (std::size_t r = 0; r < rows; ++r) softmax_row(x + r * cols, y + r * cols, cols);
}

template <class T>
void softmax_rows_backward(const T* y, const T* dy, T* dx, std::size_t rows, std::size_t cols) {
#pragma omp parallel for schedule(static) if (rows * cols > kParallelThreshold)
  for (std::size_t r = 0; r < rows; ++r) {
    softmax_row_backward(y + r * cols, dy + r * cols, dx + r * cols, cols);
  }
}

}  // namespace

template <class T>
void fill_softmax(KernelTable<T>& t) {
  t.softmax_rows = softmax_rows<T>;
  t.softmax_rows_backward = softmax_rows_backward<T>;
}

void fill_softmax(SimdPath& path) {
  fill_softmax(path.f32);
  fill_softmax(path.f64);
}

}  // namespace ag::kernels::AG_SIMD_NS
