// Cross-entropy as one op. Its composite (composite::cross_entropy: log_softmax, a product with
// a one-hot mask, a sum) is eight ops, each a pass and a new [N, V] tensor, and as many backward
// rules again. Here the forward keeps exp(x - max) and the row sums, and the backward rule is one
// pass: dlogits = g c (onehot - softmax), with c = -1 / (rows counted).
//
// The same bits as the composite, step by step: the shifted logits x - max go through the same
// exp kernel over the whole [N, V] buffer (whether an element takes the SIMD exp or std::exp
// depends on where it lies in that buffer); each row's sum is added in order from 0 and its log
// taken by std::log; the loss adds the targets' log-probabilities in row order (the composite
// adds the zeros of the mask as well, which change nothing) and multiplies by c. Backward, the
// composite's chain gives, per counted row, q = -(g c) / sum, q * exp(x - max) everywhere, and
// g c added at the target, each operation rounded once.
#include <cmath>
#include <memory>
#include <vector>

#include "ag/functional.hpp"
#include "ag/kernels/elementwise.hpp"
#include "ag/profile.hpp"
#include "ag/src/impl.hpp"
#include "ag/threads.hpp"

namespace ag {

std::int64_t counted_targets(const Tensor& logits, const Indices& targets,
                             std::int64_t ignore_index) {
  check(logits.dim() == 2, "cross_entropy", "logits must be [N, V], got ",
        shape_string(logits.shape()));
  const std::int64_t N = logits.size(0), V = logits.size(1);
  check(static_cast<std::int64_t>(targets.values.size()) == N, "cross_entropy", "got ",
        targets.values.size(), " targets for ", N, " rows of logits");
  std::int64_t counted = 0;
  for (std::int64_t n = 0; n < N; ++n) {
    const std::int64_t target = targets.values[n];
    if (target == ignore_index) continue;
    check(target >= 0 && target < V, "cross_entropy", "target ", target, " at row ", n,
          " is outside [0, ", V, ")");
    ++counted;
  }
  check(counted > 0, "cross_entropy", "every target is ignore_index (", ignore_index,
        "): nothing to average");
  return counted;
}

Tensor cross_entropy(const Tensor& logits, const Indices& targets, std::int64_t ignore_index) {
  profile::Scope profile_scope("cross_entropy");
  const std::int64_t counted = counted_targets(logits, targets, ignore_index);  // checks first
  const std::int64_t N = logits.size(0), V = logits.size(1);

  Tensor e = empty({N, V}, logits.dtype());  // exp(x - max), row by row
  Tensor sums = empty({N}, logits.dtype());  // the row sums of e
  Tensor loss = empty({}, logits.dtype());
  auto picked = std::make_shared<std::vector<std::int64_t>>(targets.values);
  dispatch(logits.dtype(), [&](auto t) {
    using T = decltype(t);
    const T* x = logits.data<T>();
    T* ex = e.data<T>();
    T* s = sums.data<T>();
    std::vector<T> log_p(static_cast<std::size_t>(N));  // log p[n, target]
#pragma omp parallel for schedule(static) if (N * V >= kParallelElements)
    for (std::int64_t n = 0; n < N; ++n) {
      const T* row = x + n * V;
      T m = row[0];
      for (std::int64_t v = 1; v < V; ++v) m = row[v] > m ? row[v] : m;
      for (std::int64_t v = 0; v < V; ++v) ex[n * V + v] = row[v] - m;
    }
    // Where the target's shifted logit is read before exp overwrites it.
    for (std::int64_t n = 0; n < N; ++n)
      if ((*picked)[n] != ignore_index) log_p[n] = ex[n * V + (*picked)[n]];
    kernels::exp(ex, ex, static_cast<std::size_t>(N * V));
#pragma omp parallel for schedule(static) if (N * V >= kParallelElements)
    for (std::int64_t n = 0; n < N; ++n) {
      T sum = T(0);
      for (std::int64_t v = 0; v < V; ++v) sum += ex[n * V + v];
      s[n] = sum;
      if ((*picked)[n] != ignore_index) log_p[n] = log_p[n] - std::log(sum);
    }
    T total = T(0);
    for (std::int64_t n = 0; n < N; ++n)
      if ((*picked)[n] != ignore_index) total += log_p[n];
    loss.data<T>()[0] = total * T(-1.0 / double(counted));
  });

  Tensor e0 = e.detach(), sums0 = sums.detach();
  const double c = -1.0 / double(counted);
  return record("cross_entropy", loss, {logits},
                [e0, sums0, picked, ignore_index, c, N, V](const Tensor& g) -> std::vector<Tensor> {
                  Tensor dx = empty({N, V}, g.dtype());
                  dispatch(g.dtype(), [&](auto t) {
                    using T = decltype(t);
                    const T gc = g.data<T>()[0] * T(c);
                    const T* ex = e0.data<T>();
                    const T* s = sums0.data<T>();
                    T* d = dx.data<T>();
#pragma omp parallel for schedule(static) if (N * V >= kParallelElements)
                    for (std::int64_t n = 0; n < N; ++n) {
                      const T q = (*picked)[n] == ignore_index ? T(0) : -gc / s[n];
                      for (std::int64_t v = 0; v < V; ++v) d[n * V + v] = q * ex[n * V + v];
                    }
                    // A loop of its own, so that no multiply-add fuses q * e with g c.
                    for (std::int64_t n = 0; n < N; ++n)
                      if ((*picked)[n] != ignore_index) {
                        T& target = d[n * V + (*picked)[n]];
                        target = target + gc;
                      }
                  });
                  return {dx};
                });
}

}  // namespace ag
