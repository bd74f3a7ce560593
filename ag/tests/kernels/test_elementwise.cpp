// The fast elementwise loops against their scalar twins, at lengths that exercise the SIMD
// body alone, the scalar tail alone, and both; in place (out == a); and exp against std::exp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "ag/kernels/dispatch.hpp"
#include "ag/kernels/elementwise.hpp"
#include "ag/threads.hpp"

namespace {

namespace k = ag::kernels;
/// 0, 1, W-1, W, W+1 (tail only, body only, both), a few full batches plus a tail, two
/// large lengths, one a multiple of every width and one not, and one long enough to be cut
/// into one piece per thread.
template <class T>
std::vector<std::size_t> lengths() {
  const std::size_t W = ag::kernels::simd_width<T>();
  return {0, 1, W - 1, W, W + 1, 2 * W + 3, 4 * W + 1, 1000, 4099, 100003};
}

template <class T>
std::vector<T> random_vector(std::size_t n, std::mt19937& rng, T lo = T(-1), T hi = T(1)) {
  std::uniform_real_distribution<T> dist(lo, hi);
  std::vector<T> v(n);
  for (auto& e : v) e = dist(rng);
  return v;
}

/// Bitwise equality that also treats two NaNs as equal. +, -, *, / and compares are
/// correctly rounded IEEE operations, so SIMD and scalar must agree exactly.
template <class T>
void expect_identical(const std::vector<T>& fast, const std::vector<T>& ref,
                      const std::string& what) {
  ASSERT_EQ(fast.size(), ref.size()) << what;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    if (std::isnan(ref[i])) {
      EXPECT_TRUE(std::isnan(fast[i])) << what << " at " << i;
    } else {
      EXPECT_EQ(fast[i], ref[i]) << what << " at " << i << " of " << ref.size();
    }
  }
}

template <class T>
class Elementwise : public ::testing::Test {};

struct TypeNames {
  template <class T>
  static std::string GetName(int) {
    return std::is_same_v<T, float> ? "float" : "double";
  }
};

using ElementwiseTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(Elementwise, ElementwiseTypes, TypeNames);

TYPED_TEST(Elementwise, BinaryOpsMatchScalarExactly) {
  using T = TypeParam;
  std::mt19937 rng(1);
  using Fn = void (*)(const T*, const T*, T*, std::size_t);
  struct Op {
    const char* name;
    Fn fast, ref;
  };
  const Op ops[] = {{"add", k::add<T>, k::scalar::add<T>},
                    {"sub", k::sub<T>, k::scalar::sub<T>},
                    {"mul", k::mul<T>, k::scalar::mul<T>},
                    {"div", k::div<T>, k::scalar::div<T>}};
  for (std::size_t n : lengths<T>()) {
    const auto a = random_vector<T>(n, rng);
    const auto b = random_vector<T>(n, rng, T(0.5), T(2));  // away from 0 for div
    for (const Op& op : ops) {
      std::vector<T> fast(n), ref(n);
      op.fast(a.data(), b.data(), fast.data(), n);
      op.ref(a.data(), b.data(), ref.data(), n);
      expect_identical(fast, ref, std::string(op.name) + " n=" + std::to_string(n));
    }
  }
}

TYPED_TEST(Elementwise, InPlaceMatchesOutOfPlace) {
  // out == a, as the autograd code does for in-place updates.
  using T = TypeParam;
  std::mt19937 rng(2);
  for (std::size_t n : lengths<T>()) {
    const std::string tag = " n=" + std::to_string(n);
    const auto a = random_vector<T>(n, rng);
    const auto b = random_vector<T>(n, rng, T(0.5), T(2));
    const auto g = random_vector<T>(n, rng);
    std::vector<T> ref(n), io;

    k::scalar::add(a.data(), b.data(), ref.data(), n);
    io = a;
    k::add(io.data(), b.data(), io.data(), n);
    expect_identical(io, ref, "add" + tag);

    k::scalar::sub(a.data(), b.data(), ref.data(), n);
    io = a;
    k::sub(io.data(), b.data(), io.data(), n);
    expect_identical(io, ref, "sub" + tag);

    k::scalar::mul(a.data(), b.data(), ref.data(), n);
    io = a;
    k::mul(io.data(), b.data(), io.data(), n);
    expect_identical(io, ref, "mul" + tag);

    k::scalar::div(a.data(), b.data(), ref.data(), n);
    io = a;
    k::div(io.data(), b.data(), io.data(), n);
    expect_identical(io, ref, "div" + tag);

    // out == b as well, for the non-commutative ones.
    k::scalar::sub(a.data(), b.data(), ref.data(), n);
    io = b;
    k::sub(a.data(), io.data(), io.data(), n);
    expect_identical(io, ref, "sub out==b" + tag);

    k::scalar::relu(a.data(), ref.data(), n);
    io = a;
    k::relu(io.data(), io.data(), n);
    expect_identical(io, ref, "relu" + tag);

    k::scalar::relu_backward(a.data(), g.data(), ref.data(), n);
    io = a;
    k::relu_backward(io.data(), g.data(), io.data(), n);
    expect_identical(io, ref, "relu_backward out==a" + tag);
    io = g;
    k::relu_backward(a.data(), io.data(), io.data(), n);
    expect_identical(io, ref, "relu_backward out==g" + tag);

    // exp in place: compare with the out-of-place fast result, which is checked against
    // std::exp in ExpMatchesStdExp.
    k::exp(a.data(), ref.data(), n);
    io = a;
    k::exp(io.data(), io.data(), n);
    expect_identical(io, ref, "exp" + tag);
  }
}

TYPED_TEST(Elementwise, AxpyMatchesScalar) {
  // The fast axpy fuses the multiply-add (one rounding), the scalar twin may not (two
  // roundings), so they agree to within one rounding of each term.
  using T = TypeParam;
  constexpr T eps = std::numeric_limits<T>::epsilon();
  std::mt19937 rng(4);
  for (std::size_t n : lengths<T>()) {
    const auto x = random_vector<T>(n, rng);
    const auto y0 = random_vector<T>(n, rng);
    for (T alpha : {T(0), T(1), T(-0.75)}) {
      std::vector<T> fast = y0, ref = y0;
      k::axpy(alpha, x.data(), fast.data(), n);
      k::scalar::axpy(alpha, x.data(), ref.data(), n);
      for (std::size_t i = 0; i < n; ++i) {
        const T bound = 2 * eps * (std::fabs(alpha * x[i]) + std::fabs(y0[i]));
        EXPECT_NEAR(fast[i], ref[i], bound) << "n=" << n << " i=" << i << " alpha=" << alpha;
      }
    }
    // Accumulation: two calls add twice.
    std::vector<T> twice(n, T(0));
    k::axpy(T(0.5), x.data(), twice.data(), n);
    k::axpy(T(0.5), x.data(), twice.data(), n);
    for (std::size_t i = 0; i < n; ++i) EXPECT_EQ(twice[i], x[i]) << "n=" << n << " i=" << i;
  }
}

TYPED_TEST(Elementwise, ExpMatchesStdExp) {
  // The kernels' exp (simd_exp.hpp) must be as good as the C library's over the normal
  // range (the subnormals below have a test of their own).
  using T = TypeParam;
  const T lo = std::is_same_v<T, float> ? T(-87) : T(-700);
  const T hi = std::is_same_v<T, float> ? T(88) : T(709);
  std::mt19937 rng(5);
  for (std::size_t n : lengths<T>()) {
    auto a = random_vector<T>(n, rng, lo, hi);
    // and the range softmax actually uses
    for (std::size_t i = 0; i < n; i += 2) a[i] = a[i] / hi * T(-20);
    std::vector<T> fast(n), ref(n);
    k::exp(a.data(), fast.data(), n);
    k::scalar::exp(a.data(), ref.data(), n);
    for (std::size_t i = 0; i < n; ++i) {
      const T expect = std::exp(a[i]);
      EXPECT_EQ(ref[i], expect);
      // Two units in the last place (measured: at most one, on every path).
      const T ulp = std::nextafter(expect, std::numeric_limits<T>::infinity()) - expect;
      EXPECT_LE(std::fabs(fast[i] - expect), 2 * ulp)
          << "exp(" << a[i] << ") n=" << n << " i=" << i;
    }
  }
}

TYPED_TEST(Elementwise, ExpIntoTheSubnormalsMatchesStdExp) {
  // Below the normal range the result is subnormal: it keeps fewer bits, so the bound is one
  // relative part plus a couple of the smallest subnormals. Beyond it, exactly 0.
  using T = TypeParam;
  const T rel = std::is_same_v<T, float> ? T(1e-6) : T(1e-14);
  const T lo = std::is_same_v<T, float> ? T(-103.9) : T(-745.1);
  const T hi = std::is_same_v<T, float> ? T(-87.4) : T(-708.4);
  std::mt19937 rng(8);
  for (std::size_t n : lengths<T>()) {
    auto a = random_vector<T>(n, rng, lo, hi);
    std::vector<T> fast(n);
    k::exp(a.data(), fast.data(), n);
    for (std::size_t i = 0; i < n; ++i) {
      const T expect = std::exp(a[i]);
      EXPECT_LE(std::fabs(fast[i] - expect),
                rel * expect + 2 * std::numeric_limits<T>::denorm_min())
          << "exp(" << a[i] << ") n=" << n << " i=" << i;
    }
  }
  const T below = std::is_same_v<T, float> ? T(-104.5) : T(-746);
  std::vector<T> a(9, below), out(9, T(1));
  k::exp(a.data(), out.data(), a.size());
  for (T v : out) EXPECT_EQ(v, T(0));
}

TYPED_TEST(Elementwise, ExpSpecialValues) {
  // In the SIMD body (first W lanes) and the tail (the element after).
  using T = TypeParam;
  constexpr T inf = std::numeric_limits<T>::infinity();
  const std::size_t W = ag::kernels::simd_width<T>();
  // Values whose exp is exact (exp(1) is not: it may be an ulp from std::exp's, which
  // ExpMatchesStdExp allows).
  const T specials[] = {
      -inf, inf, T(0), T(-0.0), T(-1000), T(1000), std::numeric_limits<T>::quiet_NaN()};
  for (T v : specials) {
    std::vector<T> a(W + 1, v), out(W + 1, T(123));
    k::exp(a.data(), out.data(), a.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
      const T expect = std::exp(v);
      if (std::isnan(expect)) {
        EXPECT_TRUE(std::isnan(out[i])) << "exp(" << v << ") lane " << i;
      } else {
        EXPECT_EQ(out[i], expect) << "exp(" << v << ") lane " << i;
      }
    }
  }
}

TYPED_TEST(Elementwise, ReluAndBackwardRule) {
  using T = TypeParam;
  constexpr T nan = std::numeric_limits<T>::quiet_NaN();
  std::mt19937 rng(6);
  for (std::size_t n : lengths<T>()) {
    auto a = random_vector<T>(n, rng);
    // Exact zeros and signed zeros: relu'(0) is taken as 0.
    for (std::size_t i = 0; i < n; i += 5) a[i] = (i % 10 == 0) ? T(0) : T(-0.0);
    const auto g = random_vector<T>(n, rng);
    std::vector<T> r(n), rb(n), rref(n), rbref(n);
    k::relu(a.data(), r.data(), n);
    k::relu_backward(a.data(), g.data(), rb.data(), n);
    k::scalar::relu(a.data(), rref.data(), n);
    k::scalar::relu_backward(a.data(), g.data(), rbref.data(), n);
    expect_identical(r, rref, "relu n=" + std::to_string(n));
    expect_identical(rb, rbref, "relu_backward n=" + std::to_string(n));
    for (std::size_t i = 0; i < n; ++i) {
      EXPECT_EQ(r[i], a[i] > T(0) ? a[i] : T(0)) << i;
      EXPECT_GE(r[i], T(0));
      EXPECT_EQ(rb[i], a[i] > T(0) ? g[i] : T(0)) << i;
    }
  }
  // NaN inputs propagate through relu (a NaN activation should be visible, not hidden as 0);
  // relu_backward's rule "g where a > 0" passes no gradient through a NaN.
  for (std::size_t n :
       {std::size_t(1), ag::kernels::simd_width<T>(), ag::kernels::simd_width<T>() + 1}) {
    std::vector<T> a(n, nan), g(n, T(2)), out(n), outb(n);
    k::relu(a.data(), out.data(), n);
    k::relu_backward(a.data(), g.data(), outb.data(), n);
    for (std::size_t i = 0; i < n; ++i) {
      EXPECT_TRUE(std::isnan(out[i])) << "n=" << n << " i=" << i;
      EXPECT_EQ(outb[i], T(0)) << "n=" << n << " i=" << i;
    }
  }
}

// Long arrays are cut into one piece per thread; every element must still take the path it
// takes in one serial pass (the SIMD body or the scalar tail, whose exp is std::exp).
TYPED_TEST(Elementwise, SameBitsAtAnyThreadCount) {
  using T = TypeParam;
  std::mt19937 rng(77);
  const std::size_t n = 100003;
  const auto a = random_vector<T>(n, rng), b = random_vector<T>(n, rng, T(0.5), T(2));
  const auto run = [&] {
    std::vector<T> sum(n), quotient(n), e(n), y = b;
    k::add(a.data(), b.data(), sum.data(), n);
    k::div(a.data(), b.data(), quotient.data(), n);
    k::exp(a.data(), e.data(), n);
    k::axpy(T(0.5), a.data(), y.data(), n);
    return std::vector<std::vector<T>>{sum, quotient, e, y};
  };
  const int threads_before = ag::max_threads();
  ag::set_max_threads(1);
  const auto one = run();
  for (int threads : {2, 3}) {
    ag::set_max_threads(threads);
    EXPECT_EQ(run(), one) << threads << " threads";
  }
  ag::set_max_threads(threads_before);
}

}  // namespace
