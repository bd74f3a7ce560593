// Column sums (columns.hpp): the bias gradient of a Linear layer, with ReLU's mask on the way.
// One pass over g: for every row, the masked gradient is written (when asked) and added into
// the running column sums, which stay in L1 while the rows stream past.
#include <algorithm>
#include <cstddef>

#include "ag/kernels/simd_variant.hpp"
#include "ag/kernels/team.hpp"
#include "ag/threads.hpp"

namespace ag::kernels::AG_SIMD_NS {
namespace {

// Below ag::kParallelElements (ag/threads.hpp) a call runs on the calling thread.
constexpr auto kParallelThreshold = std::size_t(ag::kParallelElements);

/// Columns [c0, c1) of bias_relu_backward.
template <class T>
void columns(const T* g, const T* y, T* g_out, T* db, std::size_t rows, std::size_t cols,
             std::size_t c0, std::size_t c1) {
  constexpr std::size_t W = kWidth<T>;
  const std::size_t body = c0 + (c1 - c0) / W * W;
  const Batch<T> zero(T(0));
  if (db) std::fill(db + c0, db + c1, T(0));
  for (std::size_t r = 0; r < rows; ++r) {
    const std::size_t o = r * cols;
    std::size_t c = c0;
    for (; c < body; c += W) {
      Batch<T> d = Batch<T>::load_unaligned(g + o + c);
      if (y) {
        d = xsimd::select(Batch<T>::load_unaligned(y + o + c) > zero, d, zero);
        d.store_unaligned(g_out + o + c);
      }
      if (db) (Batch<T>::load_unaligned(db + c) + d).store_unaligned(db + c);
    }
    for (; c < c1; ++c) {
      T d = g[o + c];
      if (y) {
        d = y[o + c] > T(0) ? d : T(0);
        g_out[o + c] = d;
      }
      if (db) db[c] += d;
    }
  }
}

template <class T>
void bias_relu_backward(const T* g, const T* y, T* g_out, T* db, std::size_t rows,
                        std::size_t cols) {
  // Threads take whole cache lines of columns, so that no two write one line of db or g_out.
  constexpr std::size_t kLine = 64 / sizeof(T);
  const std::size_t lines = (cols + kLine - 1) / kLine;
  const int threads = rows * cols >= kParallelThreshold && lines > 1 ? threads_available() : 1;
  if (threads <= 1) {
    columns(g, y, g_out, db, rows, cols, 0, cols);
    return;
  }
#pragma omp parallel num_threads(threads)
  {
    const Share mine = share_of(lines, std::size_t(team_member()), std::size_t(team_size()));
    const std::size_t c0 = std::min(cols, mine.first * kLine);
    const std::size_t c1 = std::min(cols, mine.end * kLine);
    if (c1 > c0) columns(g, y, g_out, db, rows, cols, c0, c1);
  }
}

}  // namespace

template <class T>
void fill_columns(KernelTable<T>& t) {
  t.bias_relu_backward = bias_relu_backward<T>;
}

void fill_columns(SimdPath& path) {
  fill_columns(path.f32);
  fill_columns(path.f64);
}

}  // namespace ag::kernels::AG_SIMD_NS
