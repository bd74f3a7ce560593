// Row softmax: the fast kernel against its scalar twin over ragged shapes (including 0 rows
// and 0 columns, and shapes big enough to go parallel), masked (-inf) entries, huge scores,
// in-place use, and the backward pass against central finite differences.
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "ag/kernels/dispatch.hpp"
#include "ag/kernels/softmax.hpp"

namespace {

namespace k = ag::kernels;
template <class T>
std::vector<std::size_t> col_counts() {
  const std::size_t W = ag::kernels::simd_width<T>();
  return {0, 1, W - 1, W, W + 1, 2 * W + 3, 37, 1000, 4099};
}

// Row counts; with 1000 and 4099 columns, 17 rows is past the kernels' OpenMP threshold.
const std::size_t kRowCounts[] = {0, 1, 3, 17};

/// Relative tolerance for two results that differ only in summation order and in exp's
/// last bit (xsimd::exp vs std::exp).
template <class T>
constexpr T rel_tol() {
  return std::is_same_v<T, float> ? T(2e-5) : T(1e-13);
}

/// Absolute floor under that: xsimd::exp flushes results below the smallest normal number
/// to 0 where std::exp returns a subnormal, so probabilities that small may differ by that.
template <class T>
constexpr T abs_floor() {
  return std::numeric_limits<T>::min();
}

template <class T>
std::vector<T> random_vector(std::size_t n, std::mt19937& rng, T lo, T hi) {
  std::uniform_real_distribution<T> dist(lo, hi);
  std::vector<T> v(n);
  for (auto& e : v) e = dist(rng);
  return v;
}

template <class T>
std::string shape(std::size_t rows, std::size_t cols) {
  return "rows=" + std::to_string(rows) + " cols=" + std::to_string(cols);
}

template <class T>
void expect_rows_sum_to_one(const std::vector<T>& y, std::size_t rows, std::size_t cols,
                            const std::string& what) {
  if (cols == 0) return;  // an empty row has nothing to sum
  for (std::size_t r = 0; r < rows; ++r) {
    long double s = 0;
    for (std::size_t j = 0; j < cols; ++j) s += y[r * cols + j];
    EXPECT_NEAR(double(s), 1.0, double(cols + 4) * std::numeric_limits<T>::epsilon())
        << what << " row " << r;
  }
}

template <class T>
class Softmax : public ::testing::Test {};

struct TypeNames {
  template <class T>
  static std::string GetName(int) {
    return std::is_same_v<T, float> ? "float" : "double";
  }
};

using SoftmaxTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(Softmax, SoftmaxTypes, TypeNames);

TYPED_TEST(Softmax, FastMatchesScalar) {
  using T = TypeParam;
  std::mt19937 rng(11);
  std::vector<std::pair<std::size_t, std::size_t>> shapes;
  for (std::size_t rows : kRowCounts)
    for (std::size_t cols : col_counts<T>()) shapes.emplace_back(rows, cols);
  shapes.emplace_back(64 * 32, 32);  // attention-sized, goes parallel
  for (auto [rows, cols] : shapes) {
    const std::string what = shape<T>(rows, cols);
    const auto x = random_vector<T>(rows * cols, rng, T(-8), T(8));
    std::vector<T> fast(rows * cols, T(-7)), ref(rows * cols, T(-7));
    k::softmax_rows(x.data(), fast.data(), rows, cols);
    k::scalar::softmax_rows(x.data(), ref.data(), rows, cols);
    for (std::size_t i = 0; i < rows * cols; ++i) {
      ASSERT_NEAR(fast[i], ref[i], rel_tol<T>() * ref[i] + abs_floor<T>()) << what << " i=" << i;
      ASSERT_GT(fast[i], T(0)) << what << " i=" << i;  // exp(-16) is far from underflow
    }
    expect_rows_sum_to_one(fast, rows, cols, what);
    expect_rows_sum_to_one(ref, rows, cols, what);
  }
}

TYPED_TEST(Softmax, AgreesWithLongDoubleReference) {
  // The scalar twin is itself checked, against the definition in extended precision.
  using T = TypeParam;
  std::mt19937 rng(12);
  const std::size_t rows = 5;
  for (std::size_t cols : col_counts<T>()) {
    const auto x = random_vector<T>(rows * cols, rng, T(-5), T(5));
    std::vector<T> fast(rows * cols), ref(rows * cols);
    k::softmax_rows(x.data(), fast.data(), rows, cols);
    k::scalar::softmax_rows(x.data(), ref.data(), rows, cols);
    for (std::size_t r = 0; r < rows; ++r) {
      long double s = 0;
      for (std::size_t j = 0; j < cols; ++j) s += std::exp((long double)x[r * cols + j]);
      for (std::size_t j = 0; j < cols; ++j) {
        const long double p = std::exp((long double)x[r * cols + j]) / s;
        EXPECT_NEAR(double(fast[r * cols + j]), double(p), double(rel_tol<T>() * p));
        EXPECT_NEAR(double(ref[r * cols + j]), double(p), double(rel_tol<T>() * p));
      }
    }
  }
}

TYPED_TEST(Softmax, MaskedCausalRowsGiveExactZeros) {
  // Row r of a causal attention matrix sees columns 0..r; the rest are -inf. Masked entries
  // must be exactly 0 and the visible ones the softmax of the visible prefix alone.
  using T = TypeParam;
  constexpr T inf = std::numeric_limits<T>::infinity();
  std::mt19937 rng(13);
  for (std::size_t n :
       {std::size_t(1), ag::kernels::simd_width<T>() - 1, ag::kernels::simd_width<T>(),
        ag::kernels::simd_width<T>() + 1, std::size_t(37), std::size_t(200)}) {
    if (n == 0) continue;  // W - 1 on the scalar path (W = 1)
    auto x = random_vector<T>(n * n, rng, T(-4), T(4));
    for (std::size_t r = 0; r < n; ++r)
      for (std::size_t c = r + 1; c < n; ++c) x[r * n + c] = -inf;
    std::vector<T> fast(n * n), ref(n * n);
    k::softmax_rows(x.data(), fast.data(), n, n);
    k::scalar::softmax_rows(x.data(), ref.data(), n, n);
    for (std::size_t r = 0; r < n; ++r) {
      std::vector<T> prefix(r + 1);
      k::scalar::softmax_rows(x.data() + r * n, prefix.data(), 1, r + 1);
      for (std::size_t c = 0; c < n; ++c) {
        const T f = fast[r * n + c];
        if (c > r) {
          EXPECT_EQ(f, T(0)) << "n=" << n << " r=" << r << " c=" << c;
          EXPECT_EQ(ref[r * n + c], T(0)) << "n=" << n << " r=" << r << " c=" << c;
        } else {
          EXPECT_NEAR(f, prefix[c], rel_tol<T>() * prefix[c]) << "n=" << n << " r=" << r;
          EXPECT_GT(f, T(0));
        }
      }
    }
    expect_rows_sum_to_one(fast, n, n, "causal n=" + std::to_string(n));
    EXPECT_EQ(fast[0], T(1));  // row 0 sees only itself
  }
}

TYPED_TEST(Softmax, FullyMaskedRowIsNaN) {
  // Documented: a row of all -inf has no distribution; the kernel writes NaN (in that row
  // only).
  using T = TypeParam;
  constexpr T inf = std::numeric_limits<T>::infinity();
  for (std::size_t cols : {std::size_t(1), ag::kernels::simd_width<T>(),
                           ag::kernels::simd_width<T>() + 1, std::size_t(37)}) {
    std::vector<T> x(3 * cols, T(0.5));
    for (std::size_t j = 0; j < cols; ++j) x[cols + j] = -inf;
    std::vector<T> fast(3 * cols), ref(3 * cols);
    k::softmax_rows(x.data(), fast.data(), 3, cols);
    k::scalar::softmax_rows(x.data(), ref.data(), 3, cols);
    for (std::size_t j = 0; j < cols; ++j) {
      EXPECT_TRUE(std::isnan(fast[cols + j])) << "cols=" << cols << " j=" << j;
      EXPECT_TRUE(std::isnan(ref[cols + j])) << "cols=" << cols << " j=" << j;
      for (std::size_t r : {std::size_t(0), std::size_t(2)}) {
        EXPECT_NEAR(fast[r * cols + j], T(1) / T(cols), rel_tol<T>()) << "cols=" << cols;
      }
    }
  }
}

TYPED_TEST(Softmax, LargeMagnitudesDoNotOverflow) {
  // Scores of +-1e4: exp(1e4) overflows in both float and double, so this passes only if the
  // row maximum is subtracted first.
  using T = TypeParam;
  const T e1 = std::exp(T(-1));
  for (std::size_t cols : {std::size_t(2), ag::kernels::simd_width<T>(),
                           ag::kernels::simd_width<T>() + 3, std::size_t(1000)}) {
    if (cols < 2) continue;  // W on the scalar path (W = 1)
    for (T top : {T(1e4), T(-1e4)}) {
      // [top, top - 1, -1e4 - 50, -1e4 - 50, ...], all exact in float. The rest are at
      // least 50 below the top, so they add < 1000 * exp(-50) ~ 2e-19 to the sum.
      std::vector<T> x(cols, T(-1e4) - T(50));
      x[0] = top;
      x[1] = top - T(1);
      std::vector<T> y(cols);
      k::softmax_rows(x.data(), y.data(), 1, cols);
      const T p0 = T(1) / (T(1) + e1);
      EXPECT_NEAR(y[0], p0, 4 * rel_tol<T>()) << "cols=" << cols << " top=" << top;
      EXPECT_NEAR(y[1], e1 * p0, 4 * rel_tol<T>()) << "cols=" << cols << " top=" << top;
      for (std::size_t j = 2; j < cols; ++j) {
        EXPECT_TRUE(std::isfinite(y[j]));
        EXPECT_GE(y[j], T(0));
        if (top > 0) {
          EXPECT_EQ(y[j], T(0)) << j;  // exp(-2e4 - 50) underflows to exactly 0
        }
      }
    }
  }
  // Uniformly spread over [-1e4, 1e4]: finite, non-negative, rows sum to 1, matches scalar.
  std::mt19937 rng(14);
  const std::size_t rows = 7, cols = 1000;
  const auto x = random_vector<T>(rows * cols, rng, T(-1e4), T(1e4));
  std::vector<T> fast(rows * cols), ref(rows * cols);
  k::softmax_rows(x.data(), fast.data(), rows, cols);
  k::scalar::softmax_rows(x.data(), ref.data(), rows, cols);
  for (std::size_t i = 0; i < rows * cols; ++i) {
    ASSERT_TRUE(std::isfinite(fast[i])) << i;
    ASSERT_NEAR(fast[i], ref[i], rel_tol<T>() * ref[i] + abs_floor<T>()) << i;
  }
  expect_rows_sum_to_one(fast, rows, cols, "uniform +-1e4");
}

TYPED_TEST(Softmax, InPlace) {
  using T = TypeParam;
  std::mt19937 rng(15);
  for (auto [rows, cols] :
       {std::pair<std::size_t, std::size_t>{3, ag::kernels::simd_width<T>() + 1},
        {17, 1000},
        {64 * 32, 32}}) {
    const auto x = random_vector<T>(rows * cols, rng, T(-3), T(3));
    std::vector<T> out(rows * cols), io = x;
    k::softmax_rows(x.data(), out.data(), rows, cols);
    k::softmax_rows(io.data(), io.data(), rows, cols);
    EXPECT_EQ(io, out) << shape<T>(rows, cols);

    const auto dy = random_vector<T>(rows * cols, rng, T(-1), T(1));
    std::vector<T> dx(rows * cols), dxio = dy;
    k::softmax_rows_backward(out.data(), dy.data(), dx.data(), rows, cols);
    k::softmax_rows_backward(out.data(), dxio.data(), dxio.data(), rows, cols);
    EXPECT_EQ(dxio, dx) << "backward dx == dy, " << shape<T>(rows, cols);
  }
}

// grades: task 0.5
TYPED_TEST(Softmax, BackwardFastMatchesScalar) {
  using T = TypeParam;
  std::mt19937 rng(16);
  std::vector<std::pair<std::size_t, std::size_t>> shapes;
  for (std::size_t rows : kRowCounts)
    for (std::size_t cols : col_counts<T>()) shapes.emplace_back(rows, cols);
  shapes.emplace_back(64 * 32, 32);
  for (auto [rows, cols] : shapes) {
    const std::string what = shape<T>(rows, cols);
    const auto x = random_vector<T>(rows * cols, rng, T(-4), T(4));
    const auto dy = random_vector<T>(rows * cols, rng, T(-1), T(1));
    std::vector<T> y(rows * cols), fast(rows * cols, T(9)), ref(rows * cols, T(9));
    k::scalar::softmax_rows(x.data(), y.data(), rows, cols);
    k::softmax_rows_backward(y.data(), dy.data(), fast.data(), rows, cols);
    k::scalar::softmax_rows_backward(y.data(), dy.data(), ref.data(), rows, cols);
    for (std::size_t r = 0; r < rows; ++r) {
      // Error scale of y_i * (dy_i - <dy, y>): y_i * (|dy_i| + sum_j |dy_j| y_j).
      T dot_abs = 0;
      for (std::size_t j = 0; j < cols; ++j)
        dot_abs += std::fabs(dy[r * cols + j]) * y[r * cols + j];
      long double row_sum = 0;
      for (std::size_t j = 0; j < cols; ++j) {
        const std::size_t i = r * cols + j;
        const T scale = y[i] * (std::fabs(dy[i]) + dot_abs);
        ASSERT_NEAR(fast[i], ref[i], rel_tol<T>() * scale + std::numeric_limits<T>::min())
            << what << " r=" << r << " j=" << j;
        row_sum += fast[i];
      }
      // Softmax outputs always sum to 1, so their gradient has zero sum along the row.
      EXPECT_NEAR(double(row_sum), 0.0, double(cols + 4) * std::numeric_limits<T>::epsilon())
          << what << " r=" << r;
    }
  }
}

// grades: task 0.5
TYPED_TEST(Softmax, BackwardMatchesFiniteDifferences) {
  // L(x) = sum_ij w_ij softmax(x)_ij, so dL/dx is the backward pass with dy = w. Central
  // differences in double (h = 1e-5: truncation ~h^2, rounding ~eps/h, both ~1e-10).
  // In float only the much coarser check that the two are close is meaningful.
  using T = TypeParam;
  const double h = std::is_same_v<T, float> ? 1e-2 : 1e-5;
  const double tol = std::is_same_v<T, float> ? 2e-3 : 1e-8;
  std::mt19937 rng(17);
  for (std::size_t cols : {std::size_t(1), ag::kernels::simd_width<T>() - 1,
                           ag::kernels::simd_width<T>() + 1, std::size_t(13)}) {
    const std::size_t rows = 3;
    auto x = random_vector<T>(rows * cols, rng, T(-2), T(2));
    const auto w = random_vector<T>(rows * cols, rng, T(-1), T(1));
    if (cols > 2) x[cols + 2] = -std::numeric_limits<T>::infinity();  // a masked entry
    std::vector<T> y(rows * cols), dx_fast(rows * cols), dx_ref(rows * cols);
    k::softmax_rows(x.data(), y.data(), rows, cols);
    k::softmax_rows_backward(y.data(), w.data(), dx_fast.data(), rows, cols);
    k::scalar::softmax_rows_backward(y.data(), w.data(), dx_ref.data(), rows, cols);
    auto loss = [&](const std::vector<T>& xs) {
      std::vector<T> ys(rows * cols);
      k::scalar::softmax_rows(xs.data(), ys.data(), rows, cols);
      double l = 0;
      for (std::size_t i = 0; i < rows * cols; ++i) l += double(w[i]) * double(ys[i]);
      return l;
    };
    for (std::size_t i = 0; i < rows * cols; ++i) {
      if (std::isinf(x[i])) {
        // A masked score has probability 0 whatever its neighbours, so no gradient.
        EXPECT_EQ(dx_fast[i], T(0));
        EXPECT_EQ(dx_ref[i], T(0));
        continue;
      }
      auto xp = x, xm = x;
      xp[i] = T(double(x[i]) + h);
      xm[i] = T(double(x[i]) - h);
      const double numeric = (loss(xp) - loss(xm)) / (double(xp[i]) - double(xm[i]));
      EXPECT_NEAR(double(dx_ref[i]), numeric, tol) << "cols=" << cols << " i=" << i;
      EXPECT_NEAR(double(dx_fast[i]), numeric, tol) << "cols=" << cols << " i=" << i;
    }
  }
}

}  // namespace
