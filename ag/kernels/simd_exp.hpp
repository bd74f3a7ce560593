// e^x for a whole batch, written out here rather than taken from xsimd: xsimd's exp differs
// between releases in the last bit (8.1's AVX-512 version multiplies and adds where 12 and
// later fuse), and softmax feeds every training step, so the same run would end elsewhere on
// another system. This one does the same operations on every release and compiler.
//
//   x = k ln2 + r,  k = round(x / ln2),  |r| <= ln2 / 2
//   e^x = 2^k e^r,  e^r by its Taylor series: degree 7 for float, 13 for double, which leaves
//   a truncation error far below one unit in the last place on that interval.
//
// Within a few units in the last place of std::exp over the whole range (tested), with
// e^x = 0 below the smallest subnormal's logarithm, +inf above the largest finite value's,
// and NaN for NaN. Private to the kernel sources (simd.hpp's Batch and compat::fma).
#pragma once
#include <array>
#include <cstddef>
#include <limits>
#include <type_traits>

#include "ag/kernels/simd_variant.hpp"

namespace ag::kernels::AG_SIMD_NS {
namespace {

template <class T>
struct ExpConstants;

template <>
struct ExpConstants<float> {
  static constexpr int kDegree = 7;
  static constexpr float kLog2e = 1.44269504088896341f;
  // ln 2 in two parts: the high part has 9 significant bits, so k * kLn2Hi is exact for every
  // k that can occur, and x - k * kLn2Hi loses nothing (Cody and Waite's reduction).
  static constexpr float kLn2Hi = 0.693359375f;
  static constexpr float kLn2Lo = -2.12194440e-4f;
  static constexpr float kMaxArg = 88.7228394f;  // ln of the largest float
  static constexpr float kMinArg = -104.0f;      // below: under half the smallest subnormal
};

template <>
struct ExpConstants<double> {
  static constexpr int kDegree = 13;
  static constexpr double kLog2e = 1.4426950408889634074;
  static constexpr double kLn2Hi = 6.93147180369123816490e-01;  // 32 trailing zero bits
  static constexpr double kLn2Lo = 1.90821492927058770002e-10;
  static constexpr double kMaxArg = 709.782712893383973;  // ln of the largest double
  static constexpr double kMinArg = -745.2;  // below: under half the smallest subnormal
};

/// 1/0!, 1/1!, ..., 1/n!, each rounded once to T.
template <class T, int n>
constexpr std::array<T, n + 1> inverse_factorials() {
  std::array<T, n + 1> c{};
  T factorial = 1;
  for (int i = 0; i <= n; ++i) {
    if (i > 0) factorial *= T(i);
    c[std::size_t(i)] = T(1) / factorial;
  }
  return c;
}

template <class T, class A>
inline xsimd::batch<T, A> simd_exp(const xsimd::batch<T, A>& x) {
  using B = xsimd::batch<T, A>;
  using C = ExpConstants<T>;
  // Clamped so that k, and the powers of two below, stay in range; the selects at the end
  // give the clamped lanes their true values.
  const B xc = xsimd::min(xsimd::max(x, B(C::kMinArg)), B(C::kMaxArg));
  const B k = xsimd::nearbyint(xc * B(C::kLog2e));
  B r = compat::fma(-k, B(C::kLn2Hi), xc);
  r = compat::fma(-k, B(C::kLn2Lo), r);

  // e^r = 1/0! + r (1/1! + r (1/2! + ... + r / n!)): Horner's form, highest term first.
  constexpr auto c = inverse_factorials<T, C::kDegree>();
  B p(c[C::kDegree]);
  for (int i = C::kDegree - 1; i >= 0; --i) p = compat::fma(p, r, B(c[std::size_t(i)]));

  // 2^k in two factors, each a normal number even where 2^k itself is subnormal or overflows,
  // so the first product is exact and only the last one rounds.
  const B k1 = xsimd::floor(k * B(T(0.5)));
  const B k2 = k - k1;
  B result = p * xsimd::ldexp(B(T(1)), xsimd::to_int(k1));
  result = result * xsimd::ldexp(B(T(1)), xsimd::to_int(k2));

  result = xsimd::select(x > B(C::kMaxArg), B(std::numeric_limits<T>::infinity()), result);
  result = xsimd::select(x < B(C::kMinArg), B(T(0)), result);
  return xsimd::select(xsimd::isnan(x), x, result);  // NaN stays NaN
}

}  // namespace
}  // namespace ag::kernels::AG_SIMD_NS
