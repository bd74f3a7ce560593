#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "ag/gradcheck.hpp"
#include "chapters/01-attention/decoder.hpp"
#include "chapters/01-attention/encoding_registry.hpp"
#include "chapters/01-attention/tests/model_check.hpp"
#include "chapters/02-sinusoidal/sinusoidal.hpp"

using namespace pe;
using ag::Tensor;

namespace {

Tensor table(std::int64_t length, std::int64_t width,
             SinusoidalLayout layout = SinusoidalLayout::interleaved) {
  return sinusoidal_table(length, width, 10000, layout, ag::Dtype::f64);
}

}  // namespace

// grades: task 2.1
TEST(Ch02Sinusoidal, ValuesAreBoundedByOne) {
  for (double v : table(200, 32).to_vector()) {
    EXPECT_LE(v, 1.0);
    EXPECT_GE(v, -1.0);
  }
}

// grades: task 2.1
TEST(Ch02Sinusoidal, HandCheckedEntries) {
  const Tensor pe = table(10, 8);
  EXPECT_DOUBLE_EQ(pe.at({0, 0}), 0.0);
  EXPECT_DOUBLE_EQ(pe.at({0, 1}), 1.0);
  EXPECT_NEAR(pe.at({1, 0}), std::sin(1.0), 1e-15);
  EXPECT_NEAR(pe.at({1, 1}), std::cos(1.0), 1e-15);
  // i = 1, C = 8: w = 10000^(-2/8) = 0.1
  EXPECT_NEAR(pe.at({3, 2}), std::sin(0.3), 1e-15);
  EXPECT_NEAR(pe.at({3, 3}), std::cos(0.3), 1e-15);
  // i = 3: w = 10000^(-6/8) = 0.001
  EXPECT_NEAR(pe.at({7, 6}), std::sin(0.007), 1e-15);
}

// grades: task 2.1
TEST(Ch02Sinusoidal, ShiftIsABlockDiagonalRotation) {
  const std::int64_t C = 16, L = 64;
  const Tensor pe = table(L, C);
  for (std::int64_t k : {1, 3, 10}) {
    for (std::int64_t pos = 0; pos + k < L; ++pos) {
      for (std::int64_t i = 0; i < C / 2; ++i) {
        const double w = std::pow(10000.0, -2.0 * double(i) / double(C));
        const double s = pe.at({pos, 2 * i}), c = pe.at({pos, 2 * i + 1});
        // [sin w(p+k), cos w(p+k)] = [[cos wk, sin wk], [-sin wk, cos wk]] [sin wp, cos wp]
        EXPECT_NEAR(pe.at({pos + k, 2 * i}), std::cos(w * k) * s + std::sin(w * k) * c, 1e-12);
        EXPECT_NEAR(pe.at({pos + k, 2 * i + 1}), -std::sin(w * k) * s + std::cos(w * k) * c, 1e-12);
      }
    }
  }
}

// grades: task 2.1
TEST(Ch02Sinusoidal, DotProductDependsOnlyOnOffset) {
  const std::int64_t C = 32, L = 50;
  const Tensor pe = table(L, C);
  auto dot = [&](std::int64_t m, std::int64_t n) {
    double sum = 0;
    for (std::int64_t j = 0; j < C; ++j) sum += pe.at({m, j}) * pe.at({n, j});
    return sum;
  };
  for (std::int64_t d : {0, 1, 5, 17}) {
    const double first = dot(d, 0);
    for (std::int64_t n = 1; n + d < L; ++n) EXPECT_NEAR(dot(n + d, n), first, 1e-10);
  }
  EXPECT_NEAR(dot(4, 4), double(C) / 2, 1e-12);
}

// The dot product is relative only as long as nothing mixes the frequency pairs: a score
// PE(m)^T M PE(n) through a general matrix M (what W_q^T W_k is in a trained model) changes
// with m at a fixed offset, while an M that scales and turns each pair by the same 2x2
// block [[a, b], [-b, a]] (such blocks commute with the pair's rotations) keeps it relative.
TEST(Ch02Sinusoidal, ARelativeScoreNeedsAMatrixThatCommutesWithTheRotations) {
  const std::int64_t C = 8, L = 40;
  const Tensor pe = table(L, C);
  ag::Rng rng(5);
  const auto general = ag::randn({C, C}, rng, ag::Dtype::f64).to_vector();
  std::vector<double> commuting(C * C, 0.0);
  for (std::int64_t i = 0; i < C / 2; ++i) {
    const double a = 0.5 + double(i), b = 1.0 - 0.3 * double(i);
    commuting[(2 * i) * C + 2 * i] = a, commuting[(2 * i) * C + 2 * i + 1] = b;
    commuting[(2 * i + 1) * C + 2 * i] = -b, commuting[(2 * i + 1) * C + 2 * i + 1] = a;
  }
  auto score = [&](const std::vector<double>& M, std::int64_t m, std::int64_t n) {
    double sum = 0;
    for (std::int64_t r = 0; r < C; ++r)
      for (std::int64_t c = 0; c < C; ++c) sum += pe.at({m, r}) * M[r * C + c] * pe.at({n, c});
    return sum;
  };
  double general_spread = 0;
  for (std::int64_t offset : {1, 3, 7}) {
    const double first = score(commuting, offset, 0);
    for (std::int64_t n = 1; n + offset < L; ++n) {
      EXPECT_NEAR(score(commuting, n + offset, n), first, 1e-10);
      general_spread = std::max(
          general_spread, std::abs(score(general, n + offset, n) - score(general, offset, 0)));
    }
  }
  EXPECT_GT(general_spread, 0.1);
}

// grades: task 2.1
TEST(Ch02Sinusoidal, ConcatenatedIsAPermutationOfInterleaved) {
  const std::int64_t C = 12, L = 20;
  const Tensor a = table(L, C), b = table(L, C, SinusoidalLayout::concatenated);
  for (std::int64_t pos = 0; pos < L; ++pos)
    for (std::int64_t i = 0; i < C / 2; ++i) {
      EXPECT_EQ(b.at({pos, i}), a.at({pos, 2 * i}));
      EXPECT_EQ(b.at({pos, C / 2 + i}), a.at({pos, 2 * i + 1}));
    }
}

// grades: task 2.2
TEST(Ch02Sinusoidal, EmbedWithOffsetUsesTheLaterRows) {
  SinusoidalEncoding enc(8);
  const Tensor x = ag::zeros({1, 3, 8}, ag::Dtype::f64);
  const Tensor out = enc.embed(x, 5);
  const Tensor pe = table(8, 8);
  for (std::int64_t t = 0; t < 3; ++t)
    for (std::int64_t j = 0; j < 8; ++j) EXPECT_EQ(out.at({0, t, j}), pe.at({5 + t, j}));
}

// grades: task 2.2
TEST(Ch02Sinusoidal, EncodingPassesGradcheck) {
  ag::Rng rng(3);
  SinusoidalEncoding enc(8);
  Tensor x = ag::randn({2, 5, 8}, rng, ag::Dtype::f64);
  const auto result =
      ag::gradcheck([&](const std::vector<Tensor>& in) { return enc.embed(in[0], 2); }, {x});
  EXPECT_TRUE(result.passed) << result.report;
}

// grades: task 2.2
TEST(Ch02Sinusoidal, OneBlockModelPassesGradcheckInFloat64) {
  ag::Rng rng(9);
  const auto result =
      gradcheck_one_block(std::make_shared<SinusoidalEncoding>(small_decoder_config().width), rng);
  EXPECT_TRUE(result.passed) << result.report;
  EXPECT_GT(result.checks, 100);
}

TEST(Ch02Sinusoidal, BadOptionsAreErrors) {
  EXPECT_THROW(sinusoidal_layout_from("sideways"), ag::Error);
  EXPECT_THROW(SinusoidalEncoding(8, {0.0, SinusoidalLayout::interleaved}), ag::Error);
  EXPECT_THROW(SinusoidalEncoding(7), ag::Error);
}

TEST(Ch02Sinusoidal, RegisteredWithItsOptions) {
  register_ch02_encodings();
  ag::Rng rng(4);
  EncodingSpec spec;
  spec.model.width = 8;
  spec.options = {{"base", "500"}, {"layout", "concatenated"}};
  auto enc = std::dynamic_pointer_cast<SinusoidalEncoding>(make_encoding("sinusoidal", spec, rng));
  ASSERT_TRUE(enc);
  EXPECT_EQ(enc->options().base, 500);
  EXPECT_EQ(enc->options().layout, SinusoidalLayout::concatenated);
  EXPECT_TRUE(enc->parameters().empty());
  for (std::map<std::string, std::string> o :
       std::vector<std::map<std::string, std::string>>{{{"layout", "sideways"}},
                                                       {{"base", "0"}},
                                                       {{"base", "-3"}},
                                                       {{"base", "1"}},
                                                       {{"base", "0.5"}},
                                                       {{"colour", "red"}}}) {
    spec.options = o;
    EXPECT_THROW(make_encoding("sinusoidal", spec, rng), ag::Error);
  }
}
