// Layer normalisation over the last axis, forward and backward. Rows are independent and
// split across OpenMP threads; inside a row the loops are SIMD over full batches with a
// scalar tail.
//
// Aliasing: every pass reads element i of its inputs before it writes element i of its
// output, and the row statistics are complete before the first write, so y may alias x
// (forward) and dx may alias x or dy (backward). dgamma and dbeta must not alias anything.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "ag/kernels/simd_variant.hpp"
#include "ag/threads.hpp"

namespace ag::kernels::AG_SIMD_NS {
namespace {

// Below ag::kParallelElements (ag/threads.hpp) a call runs on the calling thread.
[[maybe_unused]] constexpr auto kParallelThreshold = std::size_t(ag::kParallelElements);

template <class T>
void layernorm_row(const T* x, const T* gamma, const T* beta, T* y, T* mean_out, T* rstd_out,
                   std::size_t n, T eps) {
  constexpr std::size_t W = kWidth<T>;
  const std::size_t body = n - n % W;

  // Pass 1: the mean.
  Batch<T> vs(T(0));
  std::size_t i = 0;
  for (; i < body; i += W) vs += Batch<T>::load_unaligned(x + i);
  T s = compat::reduce_add(vs);
  for (; i < n; ++i) s += x[i];
  // An empty row has no statistics; take mean 0 and variance 0 so that nothing is NaN.
  const T mean = n ? s / T(n) : T(0);

  // Pass 2: the variance as the mean of squared deviations from the mean just computed.
  // The one-pass E[x^2] - E[x]^2 cancels catastrophically when |mean| >> std (activations
  // with a large offset), and can even go negative; two passes over a row in cache are cheap.
  const Batch<T> vm(mean);
  Batch<T> vq(T(0));
  for (i = 0; i < body; i += W) {
    const Batch<T> d = Batch<T>::load_unaligned(x + i) - vm;
    vq = compat::fma(d, d, vq);
  }
  T q = compat::reduce_add(vq);
  for (; i < n; ++i) {
    const T d = x[i] - mean;
    q += d * d;
  }
  const T var = n ? q / T(n) : T(0);  // biased: divide by n, as in the usual definition
  const T rstd = T(1) / std::sqrt(var + eps);

  // Pass 3: y = (x - mean) * rstd * gamma + beta, the last multiply-add fused.
  const Batch<T> vr(rstd);
  for (i = 0; i < body; i += W) {
    const Batch<T> xhat = (Batch<T>::load_unaligned(x + i) - vm) * vr;
    compat::fma(xhat, Batch<T>::load_unaligned(gamma + i), Batch<T>::load_unaligned(beta + i))
        .store_unaligned(y + i);
  }
  for (; i < n; ++i) y[i] = std::fma((x[i] - mean) * rstd, gamma[i], beta[i]);

  *mean_out = mean;
  *rstd_out = rstd;
}

// One row of the backward pass. Writes dx and adds this row's contribution into
// dgamma_acc and dbeta_acc (the caller decides whether those are the outputs or a
// thread's private partial sums).
template <class T>
void layernorm_row_backward(const T* x, const T* gamma, T mean, T rstd, const T* dy, T* dx,
                            T* dgamma_acc, T* dbeta_acc, std::size_t n) {
  if (n == 0) return;
  constexpr std::size_t W = kWidth<T>;
  const std::size_t body = n - n % W;
  const Batch<T> vm(mean);
  const Batch<T> vr(rstd);

  // Pass 1: with g = dy * gamma and xhat = (x - mean) * rstd, the two row means that the
  // formula needs, mean(g) and mean(g * xhat), accumulated together in one sweep.
  Batch<T> vg(T(0)), vgx(T(0));
  std::size_t i = 0;
  for (; i < body; i += W) {
    const Batch<T> g = Batch<T>::load_unaligned(dy + i) * Batch<T>::load_unaligned(gamma + i);
    const Batch<T> xhat = (Batch<T>::load_unaligned(x + i) - vm) * vr;
    vg += g;
    vgx = compat::fma(g, xhat, vgx);
  }
  T sg = compat::reduce_add(vg);
  T sgx = compat::reduce_add(vgx);
  for (; i < n; ++i) {
    const T g = dy[i] * gamma[i];
    sg += g;
    sgx += g * ((x[i] - mean) * rstd);
  }
  const T mg = sg / T(n);
  const T mgx = sgx / T(n);

  // Pass 2: dx = rstd * (g - mean(g) - xhat * mean(g * xhat)): the gradient through y minus
  // its components along the two directions that normalisation removes (a constant shift
  // and a rescaling of x). The same sweep adds dy * xhat into dgamma and dy into dbeta.
  const Batch<T> vmg(mg), vmgx(mgx);
  for (i = 0; i < body; i += W) {
    const Batch<T> d = Batch<T>::load_unaligned(dy + i);
    const Batch<T> g = d * Batch<T>::load_unaligned(gamma + i);
    const Batch<T> xhat = (Batch<T>::load_unaligned(x + i) - vm) * vr;
    (vr * (g - vmg - xhat * vmgx)).store_unaligned(dx + i);
    compat::fma(d, xhat, Batch<T>::load_unaligned(dgamma_acc + i)).store_unaligned(dgamma_acc + i);
    (Batch<T>::load_unaligned(dbeta_acc + i) + d).store_unaligned(dbeta_acc + i);
  }
  for (; i < n; ++i) {
    const T d = dy[i];  // read before dx[i] is written: dx may alias dy
    const T g = d * gamma[i];
    const T xhat = (x[i] - mean) * rstd;
    dgamma_acc[i] = std::fma(d, xhat, dgamma_acc[i]);
    dbeta_acc[i] += d;
    dx[i] = rstd * (g - mg - xhat * mgx);
  }
}

template <class T>
void layernorm_rows(const T* x, const T* gamma, const T* beta, T* y, T* mean, T* rstd,
                    std::size_t rows, std::size_t cols, T eps) {
#pragma omp parallel for schedule(static) if (rows * cols > kParallelThreshold)
  for (std::size_t r = 0; r < rows; ++r) {
    layernorm_row(x + r * cols, gamma, beta, y + r * cols, mean + r, rstd + r, cols, eps);
  }
}

template <class T>
void layernorm_rows_backward(const T* x, const T* gamma, const T* mean, const T* rstd, const T* dy,
                             T* dx, T* dgamma, T* dbeta, std::size_t rows, std::size_t cols) {
  // dgamma and dbeta are sums over rows, so threads cannot all add into them. The rows are cut
  // into blocks of a fixed size, whatever the thread count; each block sums its rows into a
  // private slice of `partial`, and the slices are then added into the outputs in block order.
  // The order of every addition is therefore fixed by rows and cols alone: one thread or many
  // give the same bits, which neither a per-thread split nor an atomic add would.
  //
  // Each slice starts on its own cache line and is padded to whole lines: every row
  // read-modify-writes its block's slice, and two threads writing one shared line would
  // bounce it between cores on every row (at cols = 32 that made the parallel loop slower
  // than the serial one).
  // [fixed-blocks]
  constexpr std::size_t kBlockRows = 256;
  const std::size_t blocks = (rows + kBlockRows - 1) / kBlockRows;
  constexpr std::size_t kLine = 64 / sizeof(T);  // elements per 64-byte cache line
  const std::size_t stride = (2 * cols + kLine - 1) / kLine * kLine;
  // (unique_ptr, not vector: libc++'s vector leaves weak helpers in this variant's object file)
  const std::unique_ptr<T[]> storage(new T[blocks * stride + kLine]());
  T* partial = storage.get();
  while (reinterpret_cast<std::uintptr_t>(partial) % 64 != 0) ++partial;  // < kLine steps
  const std::ptrdiff_t block_count = static_cast<std::ptrdiff_t>(blocks);
#pragma omp parallel for schedule(static) if (rows * cols > kParallelThreshold && blocks > 1)
  for (std::ptrdiff_t b = 0; b < block_count; ++b) {
    T* pg = partial + static_cast<std::size_t>(b) * stride;
    T* pb = pg + cols;
    const std::size_t end = (static_cast<std::size_t>(b) + 1) * kBlockRows;
    const std::size_t last = end < rows ? end : rows;
    for (std::size_t r = static_cast<std::size_t>(b) * kBlockRows; r < last; ++r) {
      const std::size_t o = r * cols;
      layernorm_row_backward(x + o, gamma, mean[r], rstd[r], dy + o, dx + o, pg, pb, cols);
    }
  }
  for (std::size_t b = 0; b < blocks; ++b) {
    const T* pg = partial + b * stride;
    const T* pb = pg + cols;
    for (std::size_t c = 0; c < cols; ++c) {
      dgamma[c] += pg[c];
      dbeta[c] += pb[c];
    }
  }
  // [fixed-blocks]
}

}  // namespace

template <class T>
void fill_layernorm(KernelTable<T>& t) {
  t.layernorm_rows = layernorm_rows<T>;
  t.layernorm_rows_backward = layernorm_rows_backward<T>;
}

void fill_layernorm(SimdPath& path) {
  fill_layernorm(path.f32);
  fill_layernorm(path.f64);
}

}  // namespace ag::kernels::AG_SIMD_NS
