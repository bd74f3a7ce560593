// The fast gemm against the scalar triple loop, over transposes, ragged sizes, leading
// dimensions, alpha and beta.
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "ag/kernels/dispatch.hpp"
#include "ag/kernels/gemm.hpp"

namespace {

/// One gemm call: shapes, flags, scalars, and how much each leading dimension exceeds the
/// row length (the extra columns hold NaN, so reading them shows up in the result).
template <class T>
struct Case {
  bool trans_a = false, trans_b = false;
  std::size_t M = 0, N = 0, K = 0;
  T alpha = T(1), beta = T(0);
  std::size_t pad_a = 0, pad_b = 0, pad_c = 0;

  std::string describe() const {
    return "trans_a=" + std::to_string(trans_a) + " trans_b=" + std::to_string(trans_b) +
           " M=" + std::to_string(M) + " N=" + std::to_string(N) + " K=" + std::to_string(K) +
           " alpha=" + std::to_string(alpha) + " beta=" + std::to_string(beta) +
           " pads=" + std::to_string(pad_a) + "," + std::to_string(pad_b) + "," +
           std::to_string(pad_c);
  }
};

/// A row-major [rows, cols] matrix with row stride ld = cols + pad. Every element outside
/// the [rows, cols] region is NaN.
template <class T>
struct Matrix {
  std::size_t rows, cols, ld;
  std::vector<T> data;

  Matrix(std::size_t rows_, std::size_t cols_, std::size_t pad)
      : rows(rows_),
        cols(cols_),
        ld(cols_ + pad),
        data(std::max<std::size_t>(rows_ * (cols_ + pad), 1), std::numeric_limits<T>::quiet_NaN()) {
  }

  T& at(std::size_t i, std::size_t j) { return data[i * ld + j]; }
  T at(std::size_t i, std::size_t j) const { return data[i * ld + j]; }

  void fill_uniform(std::mt19937& rng) {
    std::uniform_real_distribution<T> dist(T(-1), T(1));
    for (std::size_t i = 0; i < rows; ++i)
      for (std::size_t j = 0; j < cols; ++j) at(i, j) = dist(rng);
  }
};

/// Runs gemm and scalar::gemm on the same inputs and checks every element of C against the
/// forward error bound of a length-K dot product: both results are within
/// gamma_K * (|alpha| sum_p |a_ip b_pj| + |beta c_ij|) of the exact value, so they differ by
/// at most twice that. Also checks that C's padding is untouched.
template <class T>
void expect_matches_reference(const Case<T>& c, bool nan_in_c = false) {
  SCOPED_TRACE(c.describe());
  std::mt19937 rng(
      static_cast<unsigned>(c.M * 7919 + c.N * 104729 + c.K * 31 + c.trans_a + 2 * c.trans_b));
  // A is stored [K, M] when transposed, B is stored [N, K] when transposed.
  Matrix<T> a(c.trans_a ? c.K : c.M, c.trans_a ? c.M : c.K, c.pad_a);
  Matrix<T> b(c.trans_b ? c.N : c.K, c.trans_b ? c.K : c.N, c.pad_b);
  Matrix<T> c_in(c.M, c.N, c.pad_c);
  a.fill_uniform(rng);
  b.fill_uniform(rng);
  if (!nan_in_c) c_in.fill_uniform(rng);  // else: all NaN, which beta == 0 must ignore

  Matrix<T> fast = c_in, reference = c_in;
  ag::kernels::gemm<T>(c.trans_a, c.trans_b, c.M, c.N, c.K, c.alpha, a.data.data(), a.ld,
                       b.data.data(), b.ld, c.beta, fast.data.data(), fast.ld);
  ag::kernels::scalar::gemm<T>(c.trans_a, c.trans_b, c.M, c.N, c.K, c.alpha, a.data.data(), a.ld,
                               b.data.data(), b.ld, c.beta, reference.data.data(), reference.ld);

  const T eps = std::numeric_limits<T>::epsilon();
  const T gamma = T(c.K + 2) * eps;
  std::size_t failures = 0;
  for (std::size_t i = 0; i < c.M && failures < 5; ++i) {
    for (std::size_t j = 0; j < c.N && failures < 5; ++j) {
      T magnitude = c.beta == T(0) ? T(0) : std::abs(c.beta * c_in.at(i, j));
      for (std::size_t p = 0; p < c.K; ++p) {
        const T x = c.trans_a ? a.at(p, i) : a.at(i, p);
        const T y = c.trans_b ? b.at(j, p) : b.at(p, j);
        magnitude += std::abs(c.alpha * x * y);
      }
      const T got = fast.at(i, j), want = reference.at(i, j);
      const bool ok = std::isfinite(got) && std::abs(got - want) <= 2 * gamma * magnitude;
      if (!ok) ++failures;
      EXPECT_TRUE(ok) << "C(" << i << ", " << j << ") = " << got << ", reference " << want
                      << ", allowed error " << 2 * gamma * magnitude;
    }
  }
  for (std::size_t i = 0; i < c.M; ++i)
    for (std::size_t j = c.N; j < fast.ld; ++j)
      ASSERT_TRUE(std::isnan(fast.at(i, j)))
          << "padding of C written at (" << i << ", " << j << ")";
}

template <class T>
class Gemm : public ::testing::Test {};
using ElementTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(Gemm, ElementTypes);

constexpr bool kTransposes[2] = {false, true};

/// Sizes around every boundary the kernel cares about: empty, one, one SIMD vector
/// (W - 1, W, W + 1), the register tile's 6 rows, and its width (two vectors; four on
/// AVX-512).
template <class T>
std::vector<std::size_t> edge_sizes() {
  const std::size_t W = ag::kernels::simd_width<T>();
  return {0, 1, W - 1, W, W + 1, 5, 6, 7, 2 * W - 1, 2 * W, 2 * W + 1, 4 * W - 1, 4 * W, 4 * W + 1};
}

TYPED_TEST(Gemm, EdgeSizesAllTransposes) {
  using T = TypeParam;
  const auto sizes = edge_sizes<T>();
  for (bool ta : kTransposes)
    for (bool tb : kTransposes)
      for (std::size_t M : sizes)
        for (std::size_t N : sizes)
          for (std::size_t K : sizes) expect_matches_reference<T>({ta, tb, M, N, K, T(1), T(0)});
}

TYPED_TEST(Gemm, OddSizesWithAlphaBeta) {
  using T = TypeParam;
  for (bool ta : kTransposes)
    for (bool tb : kTransposes)
      for (T beta : {T(0), T(1), T(0.5)})
        expect_matches_reference<T>({ta, tb, 37, 53, 71, T(-1.5), beta});
}

TYPED_TEST(Gemm, LeadingDimensionsLargerThanRows) {
  using T = TypeParam;
  for (bool ta : kTransposes)
    for (bool tb : kTransposes)
      for (T beta : {T(0), T(1), T(0.5)})
        expect_matches_reference<T>({ta, tb, 29, 19, 43, T(0.75), beta, 3, 5, 7});
}

TYPED_TEST(Gemm, LargeCrossesCacheBlocks) {
  using T = TypeParam;
  // K = 513 spans several K slices, so beta must be applied only once.
  for (bool ta : kTransposes)
    for (bool tb : kTransposes)
      expect_matches_reference<T>({ta, tb, 300, 257, 513, T(0.5), T(0.5), 1, 2, 3});
  // The same through the narrow tile that products of at most 32 columns take on AVX-512.
  for (bool ta : kTransposes)
    for (bool tb : kTransposes)
      expect_matches_reference<T>({ta, tb, 50, 26, 1000, T(0.5), T(0.5), 1, 2, 3});
}

TYPED_TEST(Gemm, WideCrossesColumnBlocks) {
  using T = TypeParam;
  for (bool tb : kTransposes) expect_matches_reference<T>({false, tb, 7, 4111, 260, T(1), T(1)});
}

TYPED_TEST(Gemm, BetaZeroIgnoresNaNInC) {
  using T = TypeParam;
  for (bool ta : kTransposes)
    for (bool tb : kTransposes) {
      expect_matches_reference<T>({ta, tb, 37, 53, 71, T(2), T(0), 0, 0, 4}, true);
      expect_matches_reference<T>({ta, tb, 6, 16, 300, T(1), T(0)}, true);
    }
}

TYPED_TEST(Gemm, EmptyProductScalesC) {
  using T = TypeParam;
  // K == 0 and alpha == 0: C = beta * C, and with beta == 0 C becomes zero even from NaN.
  for (T beta : {T(0), T(1), T(0.5)}) {
    expect_matches_reference<T>({false, false, 9, 17, 0, T(1), beta});
    expect_matches_reference<T>({false, true, 9, 17, 5, T(0), beta});
  }
  expect_matches_reference<T>({false, false, 9, 17, 0, T(1), T(0)}, true);
  expect_matches_reference<T>({true, false, 9, 17, 5, T(0), T(0)}, true);
}

}  // namespace

namespace {

// Matmul splits the rows of C between threads (ag/src/ops_matmul.cpp), so a row's
// result must not depend on where a block of rows starts: the sum over k runs in the same
// order in a full register tile and in an edge tile, for the alpha = 1, beta = 0 it uses.
TYPED_TEST(Gemm, RowBlocksGiveBitwiseIdenticalRows) {
  using T = TypeParam;
  std::mt19937 rng(31);
  for (bool tb : kTransposes) {
    const std::size_t M = 61, N = 75, K = 700;  // K spans several slices
    Matrix<T> a(M, K, 0), b(tb ? N : K, tb ? K : N, 0), whole(M, N, 0), split(M, N, 0);
    a.fill_uniform(rng);
    b.fill_uniform(rng);
    ag::kernels::gemm<T>(false, tb, M, N, K, T(1), a.data.data(), a.ld, b.data.data(), b.ld, T(0),
                         whole.data.data(), whole.ld);
    for (std::size_t first : {std::size_t(0), std::size_t(7), std::size_t(31)}) {
      const std::size_t rows = first == 0 ? 7 : first == 7 ? 24 : M - first;
      ag::kernels::gemm<T>(false, tb, rows, N, K, T(1), &a.at(first, 0), a.ld, b.data.data(), b.ld,
                           T(0), &split.at(first, 0), split.ld);
    }
    EXPECT_EQ(whole.data, split.data) << "trans_b=" << tb;
  }
}

}  // namespace
