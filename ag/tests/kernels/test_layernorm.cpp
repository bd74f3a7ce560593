// Layer normalisation: the fast kernel against its scalar twin over ragged shapes (including
// 0 rows and 0 columns, and shapes big enough to go parallel); the normalised statistics;
// a large common offset (which a one-pass variance gets wrong); accumulation into dgamma and
// dbeta; and the backward formula against central finite differences in double.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "ag/kernels/dispatch.hpp"
#include "ag/kernels/layernorm.hpp"
#include "ag/threads.hpp"

namespace {

namespace k = ag::kernels;
template <class T>
std::vector<std::size_t> col_counts() {
  const std::size_t W = ag::kernels::simd_width<T>();
  return {0, 1, W - 1, W, W + 1, 2 * W + 3, 37, 1000, 4099};
}

// Row counts; with 1000 and 4099 columns, 17 rows is past the kernels' OpenMP threshold.
const std::size_t kRowCounts[] = {0, 1, 5, 17};

template <class T>
std::vector<std::pair<std::size_t, std::size_t>> shapes() {
  std::vector<std::pair<std::size_t, std::size_t>> s;
  for (std::size_t rows : kRowCounts)
    for (std::size_t cols : col_counts<T>()) s.emplace_back(rows, cols);
  s.emplace_back(64 * 32, 32);   // attention-sized rows of a small model, parallel
  s.emplace_back(64 * 32, 256);  // wider, parallel
  return s;
}

/// Relative tolerance for results that differ only in summation order and fused vs
/// unfused multiply-adds.
template <class T>
constexpr T rel_tol() {
  return std::is_same_v<T, float> ? T(2e-5) : T(1e-12);
}

template <class T>
std::vector<T> random_vector(std::size_t n, std::mt19937& rng, T lo, T hi) {
  std::uniform_real_distribution<T> dist(lo, hi);
  std::vector<T> v(n);
  for (auto& e : v) e = dist(rng);
  return v;
}

std::string shape(std::size_t rows, std::size_t cols) {
  return "rows=" + std::to_string(rows) + " cols=" + std::to_string(cols);
}

/// Inputs and parameters for one problem.
template <class T>
struct Problem {
  std::size_t rows, cols;
  std::vector<T> x, gamma, beta, dy;

  Problem(std::size_t rows_, std::size_t cols_, std::mt19937& rng, T offset = T(0.5))
      : rows(rows_), cols(cols_) {
    x = random_vector<T>(rows * cols, rng, offset - T(2), offset + T(2));
    gamma = random_vector<T>(cols, rng, T(0.5), T(1.5));
    beta = random_vector<T>(cols, rng, T(-1), T(1));
    dy = random_vector<T>(rows * cols, rng, T(-1), T(1));
  }
};

template <class T>
class LayerNorm : public ::testing::Test {};

struct TypeNames {
  template <class T>
  static std::string GetName(int) {
    return std::is_same_v<T, float> ? "float" : "double";
  }
};

using LayerNormTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(LayerNorm, LayerNormTypes, TypeNames);

TYPED_TEST(LayerNorm, ForwardFastMatchesScalar) {
  using T = TypeParam;
  const T eps = T(1e-5);
  std::mt19937 rng(21);
  for (auto [rows, cols] : shapes<T>()) {
    const std::string what = shape(rows, cols);
    Problem<T> p(rows, cols, rng);
    std::vector<T> y(rows * cols, T(7)), yr(rows * cols, T(7));
    std::vector<T> mean(rows, T(7)), meanr(rows, T(7)), rstd(rows, T(7)), rstdr(rows, T(7));
    k::layernorm_rows(p.x.data(), p.gamma.data(), p.beta.data(), y.data(), mean.data(), rstd.data(),
                      rows, cols, eps);
    k::scalar::layernorm_rows(p.x.data(), p.gamma.data(), p.beta.data(), yr.data(), meanr.data(),
                              rstdr.data(), rows, cols, eps);
    for (std::size_t r = 0; r < rows; ++r) {
      // The mean of values in [-1.5, 2.5]: summation-order error relative to their size.
      ASSERT_NEAR(mean[r], meanr[r], T(3) * rel_tol<T>()) << what << " r=" << r;
      ASSERT_NEAR(rstd[r], rstdr[r], rel_tol<T>() * rstdr[r]) << what << " r=" << r;
      for (std::size_t j = 0; j < cols; ++j) {
        const std::size_t i = r * cols + j;
        // |xhat| <= sqrt(cols), but for these inputs it stays below ~3.
        const T scale = T(4) * std::fabs(p.gamma[j]) + std::fabs(p.beta[j]);
        ASSERT_NEAR(y[i], yr[i], rel_tol<T>() * scale) << what << " r=" << r << " j=" << j;
      }
    }
  }
}

TYPED_TEST(LayerNorm, EmptyRowsHaveFiniteStatistics) {
  // cols == 0: mean 0 and variance 0, so rstd = 1/sqrt(eps); nothing is NaN.
  using T = TypeParam;
  const T eps = T(1e-5);
  std::vector<T> mean(3, T(7)), rstd(3, T(7)), meanr(3, T(7)), rstdr(3, T(7));
  const T* none = nullptr;
  k::layernorm_rows(none, none, none, static_cast<T*>(nullptr), mean.data(), rstd.data(), 3, 0,
                    eps);
  k::scalar::layernorm_rows(none, none, none, static_cast<T*>(nullptr), meanr.data(), rstdr.data(),
                            3, 0, eps);
  for (std::size_t r = 0; r < 3; ++r) {
    EXPECT_EQ(mean[r], T(0));
    EXPECT_EQ(meanr[r], T(0));
    EXPECT_EQ(rstd[r], T(1) / std::sqrt(eps));
    EXPECT_EQ(rstdr[r], T(1) / std::sqrt(eps));
  }
  // and the backward pass of nothing leaves dgamma / dbeta (also empty) alone
  k::layernorm_rows_backward(none, none, mean.data(), rstd.data(), none, static_cast<T*>(nullptr),
                             static_cast<T*>(nullptr), static_cast<T*>(nullptr), 3, 0);
}

TYPED_TEST(LayerNorm, NormalisedRowsHaveMeanZeroAndVarianceOne) {
  // With gamma = 1 and beta = 0 each output row has mean 0 and (biased) variance
  // var / (var + eps), which is 1 to within eps / var.
  using T = TypeParam;
  const T eps = T(1e-5);
  std::mt19937 rng(22);
  for (auto [rows, cols] : shapes<T>()) {
    if (rows == 0 || cols < 2) continue;
    const std::string what = shape(rows, cols);
    const auto x = random_vector<T>(rows * cols, rng, T(-3), T(5));
    const std::vector<T> gamma(cols, T(1)), beta(cols, T(0));
    std::vector<T> y(rows * cols), mean(rows), rstd(rows);
    k::layernorm_rows(x.data(), gamma.data(), beta.data(), y.data(), mean.data(), rstd.data(), rows,
                      cols, eps);
    for (std::size_t r = 0; r < rows; ++r) {
      long double m = 0, v = 0, xm = 0, xv = 0;
      for (std::size_t j = 0; j < cols; ++j) m += y[r * cols + j], xm += x[r * cols + j];
      m /= cols;
      xm /= cols;
      for (std::size_t j = 0; j < cols; ++j) {
        v += (y[r * cols + j] - m) * (y[r * cols + j] - m);
        xv += (x[r * cols + j] - xm) * (x[r * cols + j] - xm);
      }
      v /= cols;
      xv /= cols;
      EXPECT_NEAR(double(m), 0.0, 10 * rel_tol<T>()) << what << " r=" << r;
      EXPECT_NEAR(double(v), 1.0, 2 * double(eps / xv) + 10 * rel_tol<T>()) << what << " r=" << r;
      EXPECT_NEAR(double(v), double(xv / (xv + eps)), 10 * rel_tol<T>()) << what << " r=" << r;
      // and the saved statistics are those of x
      EXPECT_NEAR(double(mean[r]), double(xm), 10 * rel_tol<T>()) << what << " r=" << r;
      EXPECT_NEAR(double(rstd[r]), double(1 / std::sqrt(xv + eps)), 10 * rel_tol<T>())
          << what << " r=" << r;
    }
  }
}

TYPED_TEST(LayerNorm, LargeOffsetDoesNotCancel) {
  // x = 1e4 + u with u in [-1, 1]: E[x^2] - E[x]^2 would subtract two numbers near 1e8 to
  // get ~0.33, losing everything in float (eps * 1e8 ~ 6). The two-pass variance is fine.
  using T = TypeParam;
  const T eps = T(1e-5);
  std::mt19937 rng(23);
  // At least 17 values per row: with two or three, the variance of values this close
  // together is itself ill-conditioned in float (the scalar path has W + 1 = 2).
  const std::size_t tail_cols = std::max(ag::kernels::simd_width<T>() + 1, std::size_t(17));
  for (std::size_t cols : {tail_cols, std::size_t(256), std::size_t(1000)}) {
    const std::size_t rows = 4;
    const auto u = random_vector<T>(rows * cols, rng, T(-1), T(1));
    std::vector<T> x(rows * cols);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = T(1e4) + u[i];
    const std::vector<T> gamma(cols, T(1)), beta(cols, T(0));
    std::vector<T> y(rows * cols), mean(rows), rstd(rows), yr(rows * cols), meanr(rows),
        rstdr(rows);
    k::layernorm_rows(x.data(), gamma.data(), beta.data(), y.data(), mean.data(), rstd.data(), rows,
                      cols, eps);
    k::scalar::layernorm_rows(x.data(), gamma.data(), beta.data(), yr.data(), meanr.data(),
                              rstdr.data(), rows, cols, eps);
    for (std::size_t r = 0; r < rows; ++r) {
      long double m = 0, v = 0;
      for (std::size_t j = 0; j < cols; ++j) m += x[r * cols + j];
      m /= cols;
      for (std::size_t j = 0; j < cols; ++j) v += (x[r * cols + j] - m) * (x[r * cols + j] - m);
      v /= cols;
      const double expect = double(1 / std::sqrt(v + eps));
      const double tol = std::is_same_v<T, float> ? 1e-4 : 1e-10;
      EXPECT_NEAR(double(rstd[r]), expect, tol * expect) << "cols=" << cols << " r=" << r;
      EXPECT_NEAR(double(rstdr[r]), expect, tol * expect) << "cols=" << cols << " r=" << r;
      // y is limited by x - mean in T: float's mean of values near 1e4 is good to ~1e-3.
      const double ytol = std::is_same_v<T, float> ? 1e-2 : 1e-8;
      for (std::size_t j = 0; j < cols; ++j) {
        const double yexp = double((x[r * cols + j] - m) / std::sqrt(v + eps));
        ASSERT_NEAR(double(y[r * cols + j]), yexp, ytol) << "cols=" << cols << " j=" << j;
        ASSERT_NEAR(double(yr[r * cols + j]), yexp, ytol) << "cols=" << cols << " j=" << j;
      }
    }
  }
}

TYPED_TEST(LayerNorm, InPlace) {
  using T = TypeParam;
  const T eps = T(1e-5);
  std::mt19937 rng(24);
  for (auto [rows, cols] :
       {std::pair<std::size_t, std::size_t>{3, ag::kernels::simd_width<T>() + 1},
        {17, 1000},
        {64 * 32, 32}}) {
    Problem<T> p(rows, cols, rng);
    std::vector<T> y(rows * cols), mean(rows), rstd(rows), io = p.x, mean2(rows), rstd2(rows);
    k::layernorm_rows(p.x.data(), p.gamma.data(), p.beta.data(), y.data(), mean.data(), rstd.data(),
                      rows, cols, eps);
    k::layernorm_rows(io.data(), p.gamma.data(), p.beta.data(), io.data(), mean2.data(),
                      rstd2.data(), rows, cols, eps);
    EXPECT_EQ(io, y) << "y == x, " << shape(rows, cols);
    EXPECT_EQ(mean2, mean);
    EXPECT_EQ(rstd2, rstd);

    std::vector<T> dx(rows * cols), dg(cols, T(0)), db(cols, T(0));
    std::vector<T> dxio = p.dy, dg2(cols, T(0)), db2(cols, T(0));
    k::layernorm_rows_backward(p.x.data(), p.gamma.data(), mean.data(), rstd.data(), p.dy.data(),
                               dx.data(), dg.data(), db.data(), rows, cols);
    k::layernorm_rows_backward(p.x.data(), p.gamma.data(), mean.data(), rstd.data(), dxio.data(),
                               dxio.data(), dg2.data(), db2.data(), rows, cols);
    EXPECT_EQ(dxio, dx) << "dx == dy, " << shape(rows, cols);
    EXPECT_EQ(dg2, dg);
    EXPECT_EQ(db2, db);
  }
}

TYPED_TEST(LayerNorm, BackwardFastMatchesScalar) {
  using T = TypeParam;
  const T eps = T(1e-5);
  std::mt19937 rng(25);
  for (auto [rows, cols] : shapes<T>()) {
    const std::string what = shape(rows, cols);
    Problem<T> p(rows, cols, rng);
    std::vector<T> y(rows * cols), mean(rows), rstd(rows);
    k::scalar::layernorm_rows(p.x.data(), p.gamma.data(), p.beta.data(), y.data(), mean.data(),
                              rstd.data(), rows, cols, eps);
    std::vector<T> dx(rows * cols, T(7)), dxr(rows * cols, T(7));
    std::vector<T> dg(cols, T(0)), db(cols, T(0)), dgr(cols, T(0)), dbr(cols, T(0));
    k::layernorm_rows_backward(p.x.data(), p.gamma.data(), mean.data(), rstd.data(), p.dy.data(),
                               dx.data(), dg.data(), db.data(), rows, cols);
    k::scalar::layernorm_rows_backward(p.x.data(), p.gamma.data(), mean.data(), rstd.data(),
                                       p.dy.data(), dxr.data(), dgr.data(), dbr.data(), rows, cols);
    for (std::size_t r = 0; r < rows; ++r) {
      for (std::size_t j = 0; j < cols; ++j) {
        const std::size_t i = r * cols + j;
        // dx = rstd * (g - mean(g) - xhat * mean(g xhat)) with |g| <= 1.5, |xhat| <~ 3.
        ASSERT_NEAR(dx[i], dxr[i], rel_tol<T>() * rstd[r] * T(20))
            << what << " r=" << r << " j=" << j;
      }
    }
    // Sums over rows of terms bounded by ~3 (dgamma) and 1 (dbeta).
    const T sum_tol = rel_tol<T>() * T(3) * T(rows + 1);
    for (std::size_t j = 0; j < cols; ++j) {
      ASSERT_NEAR(dg[j], dgr[j], sum_tol) << what << " j=" << j;
      ASSERT_NEAR(db[j], dbr[j], sum_tol) << what << " j=" << j;
    }
  }
}

TYPED_TEST(LayerNorm, BackwardAccumulatesIntoDgammaDbeta) {
  // dgamma and dbeta are added into (a parameter may be used more than once); dx is
  // overwritten.
  using T = TypeParam;
  const T eps = T(1e-5);
  std::mt19937 rng(26);
  using Fn = void (*)(const T*, const T*, const T*, const T*, const T*, T*, T*, T*, std::size_t,
                      std::size_t);
  const Fn fns[] = {k::layernorm_rows_backward<T>, k::scalar::layernorm_rows_backward<T>};
  for (auto [rows, cols] : {std::pair<std::size_t, std::size_t>{1, 1},
                            {3, ag::kernels::simd_width<T>() + 1},
                            {17, 1000},
                            {64 * 32, 32}}) {
    Problem<T> p(rows, cols, rng);
    std::vector<T> y(rows * cols), mean(rows), rstd(rows);
    k::layernorm_rows(p.x.data(), p.gamma.data(), p.beta.data(), y.data(), mean.data(), rstd.data(),
                      rows, cols, eps);
    for (Fn fn : fns) {
      std::vector<T> dx1(rows * cols), dx2(rows * cols, T(5));
      std::vector<T> dg(cols, T(0)), db(cols, T(0));
      fn(p.x.data(), p.gamma.data(), mean.data(), rstd.data(), p.dy.data(), dx1.data(), dg.data(),
         db.data(), rows, cols);
      const std::vector<T> dg1 = dg, db1 = db;
      fn(p.x.data(), p.gamma.data(), mean.data(), rstd.data(), p.dy.data(), dx2.data(), dg.data(),
         db.data(), rows, cols);
      EXPECT_EQ(dx2, dx1) << shape(rows, cols);
      const T tol = rel_tol<T>() * T(3) * T(rows + 1);
      for (std::size_t j = 0; j < cols; ++j) {
        EXPECT_NEAR(dg[j], 2 * dg1[j], tol) << shape(rows, cols) << " j=" << j;
        EXPECT_NEAR(db[j], 2 * db1[j], tol) << shape(rows, cols) << " j=" << j;
      }
      // Starting from a non-zero value adds to it.
      std::vector<T> dg3(cols, T(10)), db3(cols, T(-10));
      fn(p.x.data(), p.gamma.data(), mean.data(), rstd.data(), p.dy.data(), dx2.data(), dg3.data(),
         db3.data(), rows, cols);
      for (std::size_t j = 0; j < cols; ++j) {
        EXPECT_NEAR(dg3[j], T(10) + dg1[j], tol + T(10) * rel_tol<T>()) << shape(rows, cols);
        EXPECT_NEAR(db3[j], T(-10) + db1[j], tol + T(10) * rel_tol<T>()) << shape(rows, cols);
      }
    }
  }
}

TYPED_TEST(LayerNorm, BackwardIsDeterministicAtAnyThreadCount) {
  // The parallel reduction of dgamma / dbeta combines partial sums of fixed blocks of rows in
  // a fixed order: the same call gives bit-identical results every time, with 1, 2 or 3
  // threads (a training run must not change with the machine's core count).
  using T = TypeParam;
  const T eps = T(1e-5);
  std::mt19937 rng(27);
  const std::size_t rows = 64 * 32, cols = 256;
  Problem<T> p(rows, cols, rng);
  std::vector<T> y(rows * cols), mean(rows), rstd(rows);
  k::layernorm_rows(p.x.data(), p.gamma.data(), p.beta.data(), y.data(), mean.data(), rstd.data(),
                    rows, cols, eps);
  std::vector<T> first_dg, first_db;
  const int threads_before = ag::max_threads();
  for (int run = 0; run < 6; ++run) {
    ag::set_max_threads(1 + run % 3);
    std::vector<T> dx(rows * cols), dg(cols, T(0)), db(cols, T(0));
    k::layernorm_rows_backward(p.x.data(), p.gamma.data(), mean.data(), rstd.data(), p.dy.data(),
                               dx.data(), dg.data(), db.data(), rows, cols);
    if (run == 0) {
      first_dg = dg;
      first_db = db;
    } else {
      EXPECT_EQ(dg, first_dg) << "run " << run << " with " << 1 + run % 3 << " threads";
      EXPECT_EQ(db, first_db) << "run " << run << " with " << 1 + run % 3 << " threads";
    }
  }
  ag::set_max_threads(threads_before);
}

// Central finite differences of L = sum(w * layernorm(x; gamma, beta)) in double: this
// checks the backward formula itself, not just that two copies of it agree.
template <class Forward, class Backward>
void check_against_finite_differences(Forward forward, Backward backward, std::size_t rows,
                                      std::size_t cols, std::mt19937& rng) {
  const double eps = 1e-5, h = 1e-5, tol = 1e-7;
  auto x = random_vector<double>(rows * cols, rng, -2.0, 2.0);
  auto gamma = random_vector<double>(cols, rng, 0.5, 1.5);
  auto beta = random_vector<double>(cols, rng, -1.0, 1.0);
  const auto w = random_vector<double>(rows * cols, rng, -1.0, 1.0);
  std::vector<double> mean(rows), rstd(rows), y(rows * cols);

  auto loss = [&]() {
    std::vector<double> ys(rows * cols), m(rows), s(rows);
    forward(x.data(), gamma.data(), beta.data(), ys.data(), m.data(), s.data(), rows, cols, eps);
    long double l = 0;
    for (std::size_t i = 0; i < rows * cols; ++i) l += (long double)w[i] * ys[i];
    return double(l);
  };
  auto numeric = [&](double& v) {
    const double saved = v;
    v = saved + h;
    const double lp = loss();
    v = saved - h;
    const double lm = loss();
    v = saved;
    return (lp - lm) / (2 * h);
  };

  forward(x.data(), gamma.data(), beta.data(), y.data(), mean.data(), rstd.data(), rows, cols, eps);
  std::vector<double> dx(rows * cols), dgamma(cols, 0.0), dbeta(cols, 0.0);
  backward(x.data(), gamma.data(), mean.data(), rstd.data(), w.data(), dx.data(), dgamma.data(),
           dbeta.data(), rows, cols);

  const std::string what = shape(rows, cols);
  for (std::size_t i = 0; i < rows * cols; ++i)
    EXPECT_NEAR(dx[i], numeric(x[i]), tol) << what << " dx i=" << i;
  for (std::size_t j = 0; j < cols; ++j) {
    EXPECT_NEAR(dgamma[j], numeric(gamma[j]), tol) << what << " dgamma j=" << j;
    EXPECT_NEAR(dbeta[j], numeric(beta[j]), tol) << what << " dbeta j=" << j;
  }
}

TEST(LayerNormGradcheck, ScalarBackwardMatchesFiniteDifferences) {
  std::mt19937 rng(28);
  for (std::size_t cols : {std::size_t(1), std::size_t(2), ag::kernels::simd_width<double>() - 1,
                           ag::kernels::simd_width<double>() + 1, std::size_t(13)}) {
    check_against_finite_differences(k::scalar::layernorm_rows<double>,
                                     k::scalar::layernorm_rows_backward<double>, 3, cols, rng);
  }
}

TEST(LayerNormGradcheck, FastBackwardMatchesFiniteDifferences) {
  std::mt19937 rng(29);
  for (std::size_t cols : {std::size_t(1), ag::kernels::simd_width<double>(),
                           ag::kernels::simd_width<double>() + 1, std::size_t(13)}) {
    check_against_finite_differences(k::layernorm_rows<double>, k::layernorm_rows_backward<double>,
                                     3, cols, rng);
  }
}

}  // namespace
