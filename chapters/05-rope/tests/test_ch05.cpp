// Chapter 5: RoPE's defining properties, its two layouts, partial rotation and its gradients.
#include <gtest/gtest.h>

#include <cmath>

#include "ag/gradcheck.hpp"
#include "chapters/01-attention/decoder.hpp"
#include "chapters/01-attention/encoding_registry.hpp"
#include "chapters/01-attention/permutation.hpp"
#include "chapters/01-attention/tests/model_check.hpp"
#include "chapters/05-rope/rope.hpp"

using namespace pe;
using ag::Tensor;

namespace {

constexpr auto f64 = ag::Dtype::f64;

// small_decoder_config has heads of D = 8: four planes with four frequencies
constexpr std::int64_t kHeadWidth = 8;

double dot(const Tensor& a, const Tensor& b) {
  const auto va = a.to_vector(), vb = b.to_vector();
  double s = 0;
  for (std::size_t i = 0; i < va.size(); ++i) s += va[i] * vb[i];
  return s;
}

// x [..., D] with its last axis reordered: out[..., j] = x[..., p[j]].
Tensor permute_last(const Tensor& x, const std::vector<std::int64_t>& p) {
  std::vector<Tensor> columns;
  for (auto j : p) columns.push_back(ag::slice(x, -1, j, j + 1));
  return ag::concat(columns, -1);
}

const RotaryLayout kLayouts[] = {RotaryLayout::adjacent, RotaryLayout::half};

}  // namespace

// grades: task 5.1
TEST(Ch05Rope, FrequenciesFallGeometricallyFromOne) {
  // theta_i = base^(-2i/d), i = 0 .. d/2 - 1: 1, then each plane base^(2/d) times slower
  EXPECT_EQ(rope_frequencies(2, 10000), (std::vector<double>{1.0}));
  const auto eight = rope_frequencies(8, 10000);  // 1, 10^-1, 10^-2, 10^-3
  ASSERT_EQ(eight.size(), 4u);
  for (std::size_t i = 0; i < 4; ++i)
    EXPECT_NEAR(eight[i], std::pow(10.0, -double(i)), 1e-15 * std::pow(10.0, -double(i)))
        << "plane " << i;
  const auto wide = rope_frequencies(128, 500000);
  ASSERT_EQ(wide.size(), 64u);
  for (std::size_t i = 0; i < 64; ++i)
    EXPECT_DOUBLE_EQ(wide[i], std::pow(500000.0, -2.0 * double(i) / 128.0)) << "plane " << i;
}

// grades: task 5.2
TEST(Ch05Rope, TablesHoldCosinesAndSinesOfPositionTimesTheta) {
  const auto [cos, sin] = rope_tables(5, 8, 10000, f64);
  EXPECT_EQ(cos.shape(), (ag::Shape{5, 4}));
  for (std::int64_t m = 0; m < 5; ++m)
    for (std::int64_t i = 0; i < 4; ++i) {
      const double theta = std::pow(10000.0, -2.0 * double(i) / 8.0);
      EXPECT_DOUBLE_EQ(cos.at({m, i}), std::cos(double(m) * theta));
      EXPECT_DOUBLE_EQ(sin.at({m, i}), std::sin(double(m) * theta));
    }
  EXPECT_DOUBLE_EQ(rope_frequencies(8, 10000)[2], 0.01);  // 10000^(-4/8)
}

// grades: task 5.2
TEST(Ch05Rope, TablesStayAccurateFarFromTheStart) {
  // The angle m theta_i is computed in double: in float32, m = 100000 would be off by ~5e-3.
  const std::int64_t last = 100000;
  const std::vector<double> theta = rope_frequencies(8, 10000);
  const auto [cos, sin] = rope_tables(last + 1, theta, f64);
  for (std::int64_t i = 0; i < 4; ++i) {
    const double angle = double(last) * theta[static_cast<std::size_t>(i)];
    EXPECT_NEAR(cos.at({last, i}), std::cos(angle), 1e-9) << "plane " << i << ", position " << last;
    EXPECT_NEAR(sin.at({last, i}), std::sin(angle), 1e-9) << "plane " << i << ", position " << last;
  }
}

// grades: task 5.3
TEST(Ch05Rope, OnePlaneTurnsAnticlockwise) {
  // d = 2, theta_0 = 1: position 1 turns (1, 0) by one radian to (cos 1, sin 1).
  const auto [cos, sin] = rope_tables(2, 2, 10000, f64);
  for (auto layout : kLayouts) {
    Tensor x = ag::from_vector({1, 0, 1, 0}, {1, 2, 2}, f64);  // positions 0 and 1
    Tensor y = apply_rotary(x, 0, cos, sin, layout);
    EXPECT_NEAR(y.at({0, 0, 0}), 1.0, 1e-15);
    EXPECT_NEAR(y.at({0, 0, 1}), 0.0, 1e-15);
    EXPECT_NEAR(y.at({0, 1, 0}), std::cos(1.0), 1e-15);
    EXPECT_NEAR(y.at({0, 1, 1}), std::sin(1.0), 1e-15);
  }
}

// grades: task 5.3
TEST(Ch05Rope, RotationPreservesNorm) {
  ag::Rng rng(1);
  Tensor x = ag::randn({2, 3, 9, 8}, rng, f64);
  const auto [cos, sin] = rope_tables(20, 8, 10000, f64);
  for (auto layout : kLayouts) {
    Tensor y = apply_rotary(x, 11, cos, sin, layout);
    for (std::int64_t b = 0; b < 2; ++b)
      for (std::int64_t h = 0; h < 3; ++h)
        for (std::int64_t t = 0; t < 9; ++t) {
          auto row = [&](const Tensor& z) {
            return ag::slice(ag::slice(ag::slice(z, 0, b, b + 1), 1, h, h + 1), 2, t, t + 1);
          };
          EXPECT_NEAR(dot(row(x), row(x)), dot(row(y), row(y)), 1e-12);
        }
  }
}

// grades: task 5.3
TEST(Ch05Rope, PositionZeroIsTheIdentity) {
  ag::Rng rng(2);
  Tensor x = ag::randn({2, 2, 1, 8}, rng, f64);
  const auto [cos, sin] = rope_tables(1, 8, 10000, f64);
  for (auto layout : kLayouts)
    EXPECT_EQ(max_abs_difference(apply_rotary(x, 0, cos, sin, layout), x), 0.0);
}

// grades: task 5.3
TEST(Ch05Rope, ScoreDependsOnlyOnTheRelativePosition) {
  ag::Rng rng(3);
  Tensor q = ag::randn({1, 1, 1, 8}, rng, f64), k = ag::randn({1, 1, 1, 8}, rng, f64);
  const auto [cos, sin] = rope_tables(200, 8, 10000, f64);
  for (auto layout : kLayouts)
    for (auto [m, n] : std::vector<std::pair<int, int>>{{3, 7}, {7, 3}, {5, 5}, {0, 12}}) {
      const double score =
          dot(apply_rotary(q, m, cos, sin, layout), apply_rotary(k, n, cos, sin, layout));
      for (int shift : {1, 10, 150}) {
        const double shifted = dot(apply_rotary(q, m + shift, cos, sin, layout),
                                   apply_rotary(k, n + shift, cos, sin, layout));
        EXPECT_NEAR(score, shifted, 1e-12) << "m " << m << ", n " << n << ", shift " << shift;
      }
    }
  // and it does depend on n - m
  const double near = dot(apply_rotary(q, 0, cos, sin, RotaryLayout::adjacent),
                          apply_rotary(k, 1, cos, sin, RotaryLayout::adjacent));
  const double far = dot(apply_rotary(q, 0, cos, sin, RotaryLayout::adjacent),
                         apply_rotary(k, 5, cos, sin, RotaryLayout::adjacent));
  EXPECT_GT(std::abs(near - far), 1e-3)
      << "q at position 0 scores the same against k at position 1 (" << near
      << ") as against k at position 5 (" << far << "): the rotation ignores the positions";
}

TEST(Ch05Rope, RotatingWithAnOffsetEqualsRowsOfTheFullRotation) {
  ag::Rng rng(4);
  Tensor x = ag::randn({2, 2, 10, 8}, rng, f64);
  const auto [cos, sin] = rope_tables(10, 8, 10000, f64);
  for (auto layout : kLayouts) {
    Tensor full = apply_rotary(x, 0, cos, sin, layout);
    for (std::int64_t start : {0, 4, 9})
      EXPECT_LT(
          max_abs_difference(apply_rotary(ag::slice(x, 2, start, 10), start, cos, sin, layout),
                             ag::slice(full, 2, start, 10)),
          1e-15);
  }
}

TEST(Ch05Rope, CachedDecodingMatchesTheFullPass) {
  for (auto layout : kLayouts) {
    ag::Rng rng(5);
    Decoder model(small_decoder_config(),
                  std::make_shared<RotaryEncoding>(kHeadWidth, RotaryOptions{10000, layout, 1.0}),
                  rng);
    model.to(f64);
    const auto difference = cached_decoding_difference(model);
    EXPECT_LT(difference.one_by_one, 1e-12);
    EXPECT_LT(difference.chunks, 1e-12);
  }
}

TEST(Ch05Rope, LayoutsDifferByAPermutationOfCoordinates) {
  ag::Rng rng(6);
  Tensor x = ag::randn({2, 3, 7, 10}, rng, f64);
  for (std::int64_t d : {10, 6}) {  // whole head, and partial rotation
    const auto [cos, sin] = rope_tables(7, d, 10000, f64);
    const auto p = adjacent_to_half_permutation(10, d);
    // permute then rotate as "half" == rotate as "adjacent" then permute
    EXPECT_LT(
        max_abs_difference(apply_rotary(permute_last(x, p), 0, cos, sin, RotaryLayout::half),
                           permute_last(apply_rotary(x, 0, cos, sin, RotaryLayout::adjacent), p)),
        1e-15);
  }
}

TEST(Ch05Rope, PermutingQueryAndKeyColumnsPerHeadTurnsOneLayoutIntoTheOther) {
  // Two attention layers with the same weights, except that the second's query and key
  // columns are permuted within each head: the half layout on the second gives the same
  // scores (so the same output) as the adjacent layout on the first.
  const std::int64_t C = 16, H = 2, D = 8;
  const RotaryOptions adjacent{10000, RotaryLayout::adjacent, 1.0};
  const RotaryOptions half{10000, RotaryLayout::half, 1.0};
  ag::Rng rng_a(7), rng_b(7), rng_c(7);
  SelfAttention a(C, H, rng_a, true, ag::Dtype::f32,
                  std::make_shared<RotaryPositions>(D, adjacent));
  SelfAttention b(C, H, rng_b, true, ag::Dtype::f32, std::make_shared<RotaryPositions>(D, half));
  // a's weights with the half layout
  SelfAttention c(C, H, rng_c, true, ag::Dtype::f32, std::make_shared<RotaryPositions>(D, half));
  a.to(f64);
  b.to(f64);
  c.to(f64);
  const auto p = adjacent_to_half_permutation(D, D);
  std::vector<std::int64_t> columns;  // over the whole width: head h's block permuted by p
  for (std::int64_t h = 0; h < H; ++h)
    for (auto j : p) columns.push_back(h * D + j);
  for (ag::Linear* layer : {&b.query, &b.key}) {
    layer->weight.copy_from(permute_last(layer->weight, columns));
    layer->bias.copy_from(permute_last(layer->bias, columns));
  }
  ag::Rng data(8);
  Tensor x = ag::randn({2, 6, C}, data, f64);
  a.capture_weights = b.capture_weights = true;
  Tensor out_a = a.forward(x), out_b = b.forward(x);
  EXPECT_LT(max_abs_difference(a.last_weights, b.last_weights), 1e-13);
  EXPECT_LT(max_abs_difference(out_a, out_b), 1e-13);
  // without the permutation the two layouts give different scores
  EXPECT_GT(max_abs_difference(c.forward(x), out_a), 1e-6);
}

// grades: task 5.3
TEST(Ch05Rope, FractionRotatesOnlyTheFirstCoordinates) {
  ag::Rng rng(10);
  Tensor q = ag::randn({1, 2, 6, 8}, rng, f64), k = ag::randn({1, 2, 6, 8}, rng, f64);
  for (auto layout : kLayouts) {
    EXPECT_EQ(RotaryEncoding(8, {10000, layout, 0.5}).rotated_width(), 4);
    RotaryPositions partial(8, {10000, layout, 0.5});
    const auto [rq, rk] = partial.rotate(q, k, 3);
    EXPECT_EQ(max_abs_difference(ag::slice(rq, -1, 4, 8), ag::slice(q, -1, 4, 8)), 0.0);
    EXPECT_EQ(max_abs_difference(ag::slice(rk, -1, 4, 8), ag::slice(k, -1, 4, 8)), 0.0);
    EXPECT_GT(max_abs_difference(ag::slice(rq, -1, 0, 4), ag::slice(q, -1, 0, 4)), 1e-3);
    // the rotated part uses d = 4 for its frequencies: theta_1 = base^(-2/4) = 0.01
    const auto [cos, sin] = rope_tables(9, 4, 10000, f64);
    EXPECT_LT(max_abs_difference(ag::slice(rq, -1, 0, 4),
                                 apply_rotary(ag::slice(q, -1, 0, 4), 3, cos, sin, layout)),
              1e-15);
  }
}

// grades: task 5.3
TEST(Ch05Rope, ApplyRotaryPassesGradcheck) {
  ag::Rng rng(11);
  Tensor x = ag::randn({2, 2, 5, 6}, rng, f64);
  for (auto layout : kLayouts)
    for (std::int64_t d : {6, 4}) {
      const auto [cos, sin] = rope_tables(9, d, 10000, f64);
      const auto result = ag::gradcheck(
          [&](const std::vector<Tensor>& in) { return apply_rotary(in[0], 3, cos, sin, layout); },
          {x});
      EXPECT_TRUE(result.passed) << rotary_layout_name(layout) << " d " << d << ": "
                                 << result.report;
    }
}

TEST(Ch05Rope, OneBlockModelPassesGradcheckInFloat64) {
  for (auto layout : kLayouts) {
    ag::Rng rng(12);
    const auto result = gradcheck_one_block(
        std::make_shared<RotaryEncoding>(kHeadWidth, RotaryOptions{10000, layout, 1.0}), rng);
    EXPECT_TRUE(result.passed) << result.report;
    EXPECT_GT(result.checks, 100);
  }
}

TEST(Ch05Rope, RegisteredWithItsOptionsAndBadOptionsAreErrors) {
  register_ch05_encodings();
  ag::Rng rng(13);
  EncodingSpec spec;
  spec.model = small_decoder_config();
  auto rope = std::dynamic_pointer_cast<RotaryEncoding>(make_encoding("rope", spec, rng));
  ASSERT_TRUE(rope);
  EXPECT_EQ(rope->head_width(), 8);
  EXPECT_EQ(rope->rotated_width(), 8);
  spec.options = {{"base", "500"}, {"layout", "half"}, {"fraction", "0.25"}};
  rope = std::dynamic_pointer_cast<RotaryEncoding>(make_encoding("rope", spec, rng));
  EXPECT_EQ(rope->options().base, 500);
  EXPECT_EQ(rope->options().layout, RotaryLayout::half);
  EXPECT_EQ(rope->rotated_width(), 2);
  EXPECT_TRUE(rope->parameters().empty());

  auto bad = [&](std::map<std::string, std::string> options) {
    spec.options = std::move(options);
    EXPECT_THROW(make_encoding("rope", spec, rng), ag::Error);
  };
  bad({{"layout", "interleaved"}});
  bad({{"fraction", "0"}});
  bad({{"fraction", "1.5"}});
  bad({{"fraction", "-0.5"}});
  bad({{"fraction", "0.375"}});  // 3 of 8 coordinates: odd
  bad({{"fraction", "abc"}});
  bad({{"base", "1"}});
  bad({{"theta", "10000"}});                   // not an option of rope
  EXPECT_THROW(RotaryEncoding(7), ag::Error);  // odd head width
  EXPECT_THROW(RotaryPositions(8, {10000, RotaryLayout::adjacent, 0.375}), ag::Error);
  RotaryPositions ok(8);
  Tensor q = ag::zeros({1, 1, 3, 6}, f64);
  EXPECT_THROW(ok.rotate(q, q, 0), ag::Error);  // wrong head width
  const auto [cos, sin] = rope_tables(4, 8, 10000, f64);
  Tensor x = ag::zeros({1, 1, 3, 8}, f64);
  EXPECT_THROW(apply_rotary(x, 2, cos, sin, RotaryLayout::adjacent), ag::Error);  // beyond table
  EXPECT_THROW(apply_rotary(x.to(ag::Dtype::f32), 0, cos, sin, RotaryLayout::half), ag::Error);
  EXPECT_THROW(rope_tables(4, 5, 10000, f64), ag::Error);
}

// grades: task 5.3
TEST(Ch05Rope, InspectShowsTablesAndARotatedUnitVector) {
  RotaryEncoding rope(16);
  const auto quantities = rope.inspect(8);
  ASSERT_EQ(quantities.size(), 6u);
  EXPECT_EQ(quantities[0].first, "cos");
  EXPECT_EQ(quantities[0].second.shape(), (ag::Shape{8, 8}));
  EXPECT_EQ(quantities[1].first, "sin");
  EXPECT_EQ(quantities[2].first, "rotated_example");
  const Tensor& example = quantities[2].second;
  EXPECT_EQ(example.shape(), (ag::Shape{8, 16}));
  for (std::int64_t m = 0; m < 8; ++m) {
    Tensor row = ag::slice(example, 0, m, m + 1);
    EXPECT_NEAR(dot(row, row), 1.0, 1e-12);
  }
  // without a scaling rule: RoPE's own frequencies, s = 1, no temperature
  EXPECT_EQ(quantities[3].first, "frequencies");
  EXPECT_EQ(quantities[3].second.to_vector(), rope_frequencies(16, 10000));
  EXPECT_EQ(quantities[4].first, "scale");
  EXPECT_EQ(quantities[4].second.item(), 1.0);
  EXPECT_EQ(quantities[5].first, "attention_factor");
  EXPECT_EQ(quantities[5].second.item(), 1.0);
}
