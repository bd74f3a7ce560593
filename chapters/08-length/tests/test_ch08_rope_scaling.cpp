// Chapter 5 (used in chapter 8): the four rules that extend RoPE's context, each on values
// worked out by hand, with RoPE's defining property at a fixed scale, cached decoding and
// the float64 gradient check.
#include <gtest/gtest.h>

#include <cmath>

#include "ag/gradcheck.hpp"
#include "chapters/01-attention/decoder.hpp"
#include "chapters/01-attention/encoding_registry.hpp"
#include "chapters/01-attention/permutation.hpp"
#include "chapters/01-attention/tests/model_check.hpp"
#include "chapters/05-rope/rope.hpp"
#include "chapters/08-length/rope_scaling.hpp"

using namespace pe;
using ag::Tensor;

namespace {

constexpr auto f64 = ag::Dtype::f64;

RopeScalingOptions rule(RopeScaling method, double scale, std::int64_t train_length = 0) {
  RopeScalingOptions options;
  options.method = method;
  options.scale = scale;
  options.train_length = train_length;
  return options;
}

RotaryOptions rotary(RopeScalingOptions scaling, RotaryLayout layout = RotaryLayout::adjacent) {
  RotaryOptions options;
  options.layout = layout;
  options.rule = rope_scaling_rule(scaling);
  return options;
}

double dot(const Tensor& a, const Tensor& b) {
  const auto va = a.to_vector(), vb = b.to_vector();
  double s = 0;
  for (std::size_t i = 0; i < va.size(); ++i) s += va[i] * vb[i];
  return s;
}

// The four rules at a fixed scale, and dynamic NTK, on the small decoder's heads of D = 8.
std::vector<RopeScalingOptions> every_rule(std::int64_t dynamic_train_length) {
  return {rule(RopeScaling::linear, 2), rule(RopeScaling::ntk, 4), rule(RopeScaling::yarn, 4, 4),
          rule(RopeScaling::dynamic, 1, dynamic_train_length)};
}

}  // namespace

TEST(Ch08RopeScaling, NoneKeepsRopeBitForBit) {
  EXPECT_EQ(scaled_rope_frequencies(8, 10000, {}, 100), rope_frequencies(8, 10000));
  ag::Rng rng(20);
  Tensor q = ag::randn({2, 2, 5, 8}, rng, f64), k = ag::randn({2, 2, 5, 8}, rng, f64);
  const auto [cos, sin] = rope_tables(8, 8, 10000, f64);
  const auto [rq, rk] = RotaryPositions(8).rotate(q, k, 3);
  EXPECT_EQ(max_abs_difference(rq, apply_rotary(q, 3, cos, sin, RotaryLayout::adjacent)), 0.0);
  EXPECT_EQ(max_abs_difference(rk, apply_rotary(k, 3, cos, sin, RotaryLayout::adjacent)), 0.0);
}

// grades: task 8.1
TEST(Ch08RopeScaling, LinearDividesPositionsByTheScale) {
  // d = 4, base 10000: theta = (1, 0.01); s = 2 gives (0.5, 0.005)
  const auto theta = scaled_rope_frequencies(4, 10000, rule(RopeScaling::linear, 2), 64);
  ASSERT_EQ(theta.size(), 2u);
  EXPECT_DOUBLE_EQ(theta[0], 0.5);
  EXPECT_DOUBLE_EQ(theta[1], 0.005);
  // through the hook: (1, 0, 0, 0) at position 3 turns by 3 / 2 = 1.5 radians in plane 0
  RotaryPositions linear(4, rotary(rule(RopeScaling::linear, 2)));
  const Tensor x = ag::from_vector({1, 0, 0, 0}, {1, 1, 1, 4}, f64);
  const auto turned = linear.rotate(x, x, 3).first.to_vector();
  EXPECT_NEAR(turned[0], std::cos(1.5), 1e-15);
  EXPECT_NEAR(turned[1], std::sin(1.5), 1e-15);
  // position 6 at s = 2 is position 3 of plain RoPE
  const auto plain = RotaryPositions(4).rotate(x, x, 3).first;
  EXPECT_LT(max_abs_difference(linear.rotate(x, x, 6).first, plain), 1e-15);
}

// grades: task 8.1
TEST(Ch08RopeScaling, NtkRaisesTheBaseSoThatTheLowestFrequencyIsDividedByTheScale) {
  // d = 4, s = 4: base' = 10000 * 4^(4/2) = 160000, theta'_1 = 160000^(-1/2) = 1/400
  auto theta = scaled_rope_frequencies(4, 10000, rule(RopeScaling::ntk, 4), 64);
  EXPECT_DOUBLE_EQ(theta[0], 1.0);  // the fastest plane is not touched
  EXPECT_NEAR(theta[1], 0.0025, 1e-17);
  // d = 8, s = 2: base' = 10000 * 2^(8/6), theta'_3 = base'^(-6/8) = 10000^(-3/4) / 2
  theta = scaled_rope_frequencies(8, 10000, rule(RopeScaling::ntk, 2), 64);
  EXPECT_DOUBLE_EQ(theta[0], 1.0);
  EXPECT_NEAR(theta[3], 0.001 / 2, 1e-17);
  EXPECT_NEAR(theta[1], std::pow(10000 * std::pow(2.0, 8.0 / 6), -2.0 / 8), 1e-15);
}

// grades: task 8.1
TEST(Ch08RopeScaling, DynamicScaleFollowsTheLength) {
  const RopeScalingOptions dynamic = rule(RopeScaling::dynamic, 1, 8);
  EXPECT_EQ(rope_scale_at(dynamic, 4), 1.0);  // shorter than training: plain RoPE
  EXPECT_EQ(rope_scale_at(dynamic, 8), 1.0);
  EXPECT_EQ(rope_scale_at(dynamic, 12), 1.5);
  EXPECT_EQ(rope_scale_at(dynamic, 32), 4.0);
  EXPECT_EQ(scaled_rope_frequencies(4, 10000, dynamic, 8), rope_frequencies(4, 10000));
  // L = 16: s = 2, base' = 10000 * 2^2 = 40000, theta'_1 = 1/200; L = 32: s = 4, 1/400
  EXPECT_NEAR(scaled_rope_frequencies(4, 10000, dynamic, 16)[1], 0.005, 1e-17);
  EXPECT_NEAR(scaled_rope_frequencies(4, 10000, dynamic, 32)[1], 0.0025, 1e-17);
  // through the hook: a pass over positions 0 .. 15 uses s = 2
  RotaryPositions positions(4, rotary(dynamic));
  const Tensor x = ag::from_vector({0, 0, 1, 0}, {1, 1, 1, 4}, f64);
  const auto turned = positions.rotate(x, x, 15).first.to_vector();  // L = 15 + 1 = 16
  EXPECT_NEAR(turned[2], std::cos(15 * 0.005), 1e-15);
  EXPECT_NEAR(turned[3], std::sin(15 * 0.005), 1e-15);
}

// grades: task 8.1
TEST(Ch08RopeScaling, YarnRampsFromInterpolationToExtrapolation) {
  EXPECT_EQ(yarn_ramp(0.5, 1, 32), 0.0);
  EXPECT_EQ(yarn_ramp(16.5, 1, 32), 0.5);
  EXPECT_EQ(yarn_ramp(40, 1, 32), 1.0);
  // d = 4, base 10000: theta = (1, 0.01), L_train = 32, s = 4. Plane 0 turns
  // r = 32 / (2 pi) = 5.0930 times over the training length: gamma = (5.0930 - 1) / 31 =
  // 0.13203, theta' = (1 - gamma) / 4 + gamma = 0.34902. Plane 1 turns r = 0.0509 < alpha
  // times: interpolated, 0.01 / 4.
  RopeScalingOptions yarn = rule(RopeScaling::yarn, 4, 32);
  auto theta = scaled_rope_frequencies(4, 10000, yarn, 64);
  EXPECT_NEAR(theta[0], 0.34902318, 1e-8);
  EXPECT_DOUBLE_EQ(theta[1], 0.0025);
  yarn.beta = 4;  // r = 5.09 > beta: plane 0 kept as trained
  EXPECT_EQ(scaled_rope_frequencies(4, 10000, yarn, 64)[0], 1.0);
  yarn.alpha = 3.5;
  yarn.beta = 6.5;  // halfway along the ramp: gamma = (5.0930 - 3.5) / 3 = 0.53099
  theta = scaled_rope_frequencies(4, 10000, yarn, 64);
  EXPECT_NEAR(theta[0], (1 - 0.53098606) / 4 + 0.53098606, 1e-8);
  yarn.alpha = 6;
  yarn.beta = 32;  // r < alpha: plane 0 interpolated like linear
  EXPECT_DOUBLE_EQ(scaled_rope_frequencies(4, 10000, yarn, 64)[0], 0.25);
}

// grades: task 8.2
TEST(Ch08RopeScaling, YarnTemperatureMultipliesTheScores) {
  // s = 4: q and k each times 0.1 ln 4 + 1 = 1.1386294, the score times its square
  const RopeScalingOptions yarn = rule(RopeScaling::yarn, 4, 32);
  EXPECT_NEAR(rope_attention_factor(yarn, 64), 1.1386294361, 1e-10);
  EXPECT_EQ(rope_attention_factor(rule(RopeScaling::linear, 4), 64), 1.0);
  EXPECT_EQ(rope_attention_factor(rule(RopeScaling::ntk, 4), 64), 1.0);
  ag::Rng rng(21);
  Tensor q = ag::randn({1, 1, 1, 8}, rng, f64), k = ag::randn({1, 1, 1, 8}, rng, f64);
  const auto [rq, rk] = RotaryPositions(8, rotary(yarn)).rotate(q, k, 0);  // position 0: no turn
  EXPECT_NEAR(dot(rq, rk), 1.1386294361119891 * 1.1386294361119891 * dot(q, k), 1e-12);
}

// YaRN's temperature (task 8.2) completes the scaling rules: the tests that run every
// rule through attention grade 8.2 (those of 8.1 may not wait for it).
// grades: task 8.2
TEST(Ch08RopeScaling, ScoreDependsOnlyOnTheRelativePositionAtAFixedScale) {
  ag::Rng rng(22);
  Tensor q = ag::randn({1, 1, 1, 8}, rng, f64), k = ag::randn({1, 1, 1, 8}, rng, f64);
  for (const auto& scaling : every_rule(4))
    for (auto layout : {RotaryLayout::adjacent, RotaryLayout::half}) {
      const std::string what = rope_scaling_name(scaling.method);
      if (scaling.method == RopeScaling::dynamic) {
        // dynamic NTK fixes its scale per pass: within one pass of 200 positions (s = 50)
        const auto theta = scaled_rope_frequencies(8, 10000, scaling, 200);
        const auto [cos, sin] = rope_tables(200, theta, f64);
        const double score =
            dot(apply_rotary(q, 3, cos, sin, layout), apply_rotary(k, 7, cos, sin, layout));
        const double shifted =
            dot(apply_rotary(q, 153, cos, sin, layout), apply_rotary(k, 157, cos, sin, layout));
        EXPECT_NEAR(score, shifted, 1e-12) << what;
        continue;
      }
      RotaryPositions positions(8, rotary(scaling, layout));
      auto score = [&](std::int64_t m, std::int64_t n) {
        return dot(positions.rotate(q, q, m).first, positions.rotate(k, k, n).second);
      };
      for (auto [m, n] : std::vector<std::pair<int, int>>{{3, 7}, {7, 3}, {0, 12}})
        for (int shift : {1, 10, 150})
          EXPECT_NEAR(score(m, n), score(m + shift, n + shift), 1e-12)
              << what << " m " << m << " n " << n << " shift " << shift;
      EXPECT_GT(std::abs(score(0, 1) - score(0, 5)), 1e-3) << what;  // and it does depend on n - m
    }
}

TEST(Ch08RopeScaling, CachedDecodingMatchesTheFullPassAtAFixedScale) {
  // linear, ntk and yarn; dynamic with train_length 6 stays at s = 1 over the 6 tokens
  for (const auto& scaling : every_rule(6)) {
    ag::Rng rng(23);
    Decoder model(small_decoder_config(), std::make_shared<RotaryEncoding>(8, rotary(scaling)),
                  rng);
    model.to(f64);
    const auto difference = cached_decoding_difference(model);
    EXPECT_LT(difference.one_by_one, 1e-12) << rope_scaling_name(scaling.method);
    EXPECT_LT(difference.chunks, 1e-12) << rope_scaling_name(scaling.method);
  }
}

TEST(Ch08RopeScaling, DynamicScalingIsNotCacheConsistentPastTheTrainingLength) {
  // The cache holds keys turned at the scale of their own step (s = max(1, L / 2) for L then),
  // while a full pass turns every key at s = 6 / 2 = 3: the two disagree, as in every
  // implementation that caches rotated keys. Chapter 8 evaluates dynamic NTK on full passes.
  ag::Rng rng(24);
  Decoder model(small_decoder_config(),
                std::make_shared<RotaryEncoding>(8, rotary(rule(RopeScaling::dynamic, 1, 2))), rng);
  model.to(f64);
  EXPECT_GT(cached_decoding_difference(model).one_by_one, 1e-6);
}

// Every rule through attention, YaRN's temperature too: grades 8.2, not 8.1.
// grades: task 8.2
TEST(Ch08RopeScaling, OneBlockModelPassesGradcheckInFloat64) {
  // dynamic with train_length 2: the 3-token sequences run at s = 1.5
  for (const auto& scaling : every_rule(2)) {
    ag::Rng rng(25);
    const auto result =
        gradcheck_one_block(std::make_shared<RotaryEncoding>(8, rotary(scaling)), rng);
    EXPECT_TRUE(result.passed) << rope_scaling_name(scaling.method) << ": " << result.report;
    EXPECT_GT(result.checks, 100);
  }
}

TEST(Ch08RopeScaling, OptionsThroughTheRegistryAndClearErrors) {
  register_ch08_encodings();  // chapter 5's rope, with the scaling options
  ag::Rng rng(26);
  EncodingSpec spec;
  spec.model = small_decoder_config();
  spec.options = {
      {"scaling", "yarn"}, {"scale", "4"}, {"train_length", "32"}, {"alpha", "2"}, {"beta", "16"}};
  auto rope = std::dynamic_pointer_cast<RotaryEncoding>(make_encoding("rope", spec, rng));
  ASSERT_TRUE(rope);
  const RopeScalingOptions yarn = rope_scaling_of(rope->options());
  EXPECT_EQ(yarn.method, RopeScaling::yarn);
  EXPECT_EQ(yarn.scale, 4);
  EXPECT_EQ(yarn.train_length, 32);
  EXPECT_EQ(yarn.alpha, 2);
  EXPECT_EQ(yarn.beta, 16);
  spec.options = {{"scaling", "dynamic"}, {"train_length", "16"}};
  rope = std::dynamic_pointer_cast<RotaryEncoding>(make_encoding("rope", spec, rng));
  EXPECT_EQ(rope_scaling_of(rope->options()).method, RopeScaling::dynamic);
  spec.options = {{"scaling", "none"}};
  rope = std::dynamic_pointer_cast<RotaryEncoding>(make_encoding("rope", spec, rng));
  EXPECT_EQ(rope_scaling_of(rope->options()).method, RopeScaling::none);

  auto refused = [&](std::map<std::string, std::string> options, const std::string& words) {
    spec.options = std::move(options);
    try {
      make_encoding("rope", spec, rng);
      ADD_FAILURE() << "accepted; expected an error saying '" << words << "'";
    } catch (const ag::Error& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  refused({{"scaling", "quadratic"}}, "unknown scaling 'quadratic'");
  refused({{"scaling", "linear"}, {"scale", "0.5"}}, "scale must be at least 1");
  refused({{"scaling", "linear"}, {"scale", "four"}}, "finite number");
  refused({{"scaling", "linear"}}, "needs scale=S");
  refused({{"scaling", "yarn"}, {"scale", "4"}}, "yarn needs train_length");
  refused({{"scaling", "dynamic"}}, "dynamic needs train_length");
  refused({{"scaling", "yarn"}, {"scale", "4"}, {"train_length", "0"}}, "train_length");
  refused({{"scale", "4"}}, "scale does nothing with scaling=none");
  refused({{"scaling", "dynamic"}, {"scale", "4"}, {"train_length", "8"}},
          "max(1, L / train_length)");
  refused({{"scaling", "linear"}, {"scale", "4"}, {"train_length", "8"}},
          "train_length does nothing");
  refused({{"scaling", "ntk"}, {"scale", "4"}, {"alpha", "2"}}, "alpha does nothing");
  refused({{"scaling", "yarn"}, {"scale", "4"}, {"train_length", "8"}, {"alpha", "32"}},
          "0 < alpha < beta");
  refused({{"scaling", "ntk"}, {"scale", "2"}, {"fraction", "0.25"}}, "above 2");  // d = 2
  EXPECT_THROW(RotaryPositions(8, rotary(rule(RopeScaling::linear, 0.5))), ag::Error);
}

TEST(Ch08RopeScaling, InspectShowsTheFrequenciesAndScaleInForce) {
  RotaryEncoding dynamic(4, rotary(rule(RopeScaling::dynamic, 1, 8)));
  const auto quantities = dynamic.inspect(16);  // s = 16 / 8 = 2
  ASSERT_EQ(quantities.size(), 6u);
  EXPECT_EQ(quantities[3].first, "frequencies");
  EXPECT_NEAR(quantities[3].second.to_vector()[1], 0.005, 1e-17);
  EXPECT_EQ(quantities[4].second.item(), 2.0);
  // the tables use those frequencies: cos of 15 * 0.005 at position 15, plane 1
  EXPECT_NEAR(quantities[0].second.at({15, 1}), std::cos(15 * 0.005), 1e-15);
  RotaryEncoding yarn(4, rotary(rule(RopeScaling::yarn, 4, 32)));
  EXPECT_NEAR(yarn.inspect(8)[5].second.item(), 1.1386294361, 1e-10);
}
