// Scans: cumsum, the running sum along one axis. Its backward rule is itself a cumsum, run
// the other way: x[t] reaches every out[i] with i >= t (forward), so its gradient is the sum
// of g[i] over those i, a reverse running sum of g.
#include <algorithm>

#include "ag/ops.hpp"
#include "ag/profile.hpp"
#include "ag/src/impl.hpp"

namespace ag {

Tensor cumsum(const Tensor& x, std::int64_t axis, bool reverse) {
  profile::Scope profile_scope("cumsum");
  axis = normalize_axis("cumsum", axis, x.dim());
  // View x as [outer, n, inner]: the sum runs along n, one whole inner row at a time, so the
  // innermost loop reads and writes contiguous values whatever the axis.
  const std::int64_t n = x.shape()[axis];
  std::int64_t outer = 1, inner = 1;
  for (std::int64_t i = 0; i < axis; ++i) outer *= x.shape()[i];
  for (std::int64_t i = axis + 1; i < x.dim(); ++i) inner *= x.shape()[i];
  Tensor out = empty(x.shape(), x.dtype());
  dispatch(x.dtype(), [&](auto t) {
    using T = decltype(t);
    const T* src = x.data<T>();
    T* dst = out.data<T>();
    const std::int64_t first = reverse ? n - 1 : 0, direction = reverse ? -1 : 1;
    for (std::int64_t o = 0; o < outer; ++o)
      for (std::int64_t step = 0, k = first; step < n; ++step, k += direction) {
        const T* row = src + (o * n + k) * inner;
        T* sums = dst + (o * n + k) * inner;
        if (step == 0) {
          std::copy(row, row + inner, sums);
          continue;
        }
        const T* previous = sums - direction * inner;  // the row summed just before
        for (std::int64_t i = 0; i < inner; ++i) sums[i] = previous[i] + row[i];
      }
  });
  return record("cumsum", out, {x}, [axis, reverse](const Tensor& g) -> std::vector<Tensor> {
    return {cumsum(g, axis, !reverse)};
  });
}

}  // namespace ag
