// bias_relu_backward against its scalar twin: column sums in row order, so the two agree to
// the bit, at every width around the vector and cache-line boundaries and at any thread count.
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "ag/kernels/columns.hpp"
#include "ag/kernels/dispatch.hpp"
#include "ag/threads.hpp"

namespace {

template <class T>
class Columns : public ::testing::Test {};
using ElementTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(Columns, ElementTypes);

/// g_out and db from the chosen path or from the scalar twin.
template <class T>
std::pair<std::vector<T>, std::vector<T>> run(bool scalar, const std::vector<T>& g,
                                              const std::vector<T>* y, bool bias, std::size_t rows,
                                              std::size_t cols) {
  std::vector<T> g_out(g.size(), std::numeric_limits<T>::quiet_NaN());
  std::vector<T> db(cols + 1, std::numeric_limits<T>::quiet_NaN());
  const T* mask = y ? y->data() : nullptr;
  T* out = y ? g_out.data() : nullptr;
  T* sums = bias ? db.data() : nullptr;
  if (scalar)
    ag::kernels::scalar::bias_relu_backward(g.data(), mask, out, sums, rows, cols);
  else
    ag::kernels::bias_relu_backward(g.data(), mask, out, sums, rows, cols);
  return {g_out, db};
}

TYPED_TEST(Columns, MatchesScalarTwinBitForBit) {
  using T = TypeParam;
  const std::size_t W = ag::kernels::simd_width<T>();
  std::mt19937 rng(5);
  std::normal_distribution<T> dist;
  const int threads_before = ag::max_threads();
  for (std::size_t cols : {std::size_t(1), W - 1 + (W == 1), W, W + 1, 3 * W + 2, std::size_t(26),
                           std::size_t(256), std::size_t(1000)}) {
    for (std::size_t rows : {std::size_t(0), std::size_t(1), std::size_t(7), std::size_t(300)}) {
      std::vector<T> g(std::max<std::size_t>(rows * cols, 1)), y(g.size());
      for (T& v : g) v = dist(rng);
      for (T& v : y) v = dist(rng) < T(0) ? T(0) : T(1);  // ReLU's output: zero or positive
      for (bool masked : {false, true})
        for (bool bias : {false, true}) {
          if (!masked && !bias) continue;
          SCOPED_TRACE("rows=" + std::to_string(rows) + " cols=" + std::to_string(cols) +
                       " masked=" + std::to_string(masked) + " bias=" + std::to_string(bias));
          const auto want = run<T>(true, g, masked ? &y : nullptr, bias, rows, cols);
          for (int threads : {1, 2, 3}) {
            ag::set_max_threads(threads);
            const auto got = run<T>(false, g, masked ? &y : nullptr, bias, rows, cols);
            // NaN != NaN: compare the untouched entries by their being NaN.
            for (std::size_t i = 0; i < got.first.size(); ++i) {
              if (std::isnan(want.first[i])) {
                EXPECT_TRUE(std::isnan(got.first[i])) << "g_out " << i;
              } else {
                EXPECT_EQ(got.first[i], want.first[i]) << "g_out " << i << ", " << threads;
              }
            }
            for (std::size_t c = 0; c < cols && bias; ++c)
              EXPECT_EQ(got.second[c], want.second[c]) << "db " << c << ", " << threads;
            EXPECT_TRUE(std::isnan(got.second[cols])) << "db written past its end";
          }
        }
    }
  }
  ag::set_max_threads(threads_before);
}

}  // namespace
