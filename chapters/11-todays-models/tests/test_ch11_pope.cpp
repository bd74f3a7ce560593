// Chapter 11: PoPE. Its defining property (the score of fixed contents depends on the
// positions only through n - m, and no content can move the peak away from the offset the
// phase bias chooses, as content moves RoPE's), the score against the paper's sum over
// frequencies, its gradients in float64, the cache with keys twice as wide, training through
// the lab, and its options.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <memory>
#include <numeric>
#include <string>

#include "ag/gradcheck.hpp"
#include "chapters/01-attention/decoder.hpp"
#include "chapters/01-attention/encoding_registry.hpp"
#include "chapters/01-attention/permutation.hpp"
#include "chapters/01-attention/tests/model_check.hpp"
#include "chapters/05-rope/rope.hpp"
#include "chapters/08-length/tests/tiny_length_config.hpp"
#include "chapters/11-todays-models/pope.hpp"
#include "chapters/11-todays-models/todays_models.hpp"
#include "lab/chapter_registry.hpp"

using namespace pe;
using ag::Tensor;

namespace {

constexpr auto f64 = ag::Dtype::f64;

double softplus(double x) { return std::log1p(std::exp(x)); }

// An encoding from the registry for the small test decoder (width 16, 2 heads of 8, 2 layers).
std::shared_ptr<PositionalEncoding> make_small(const std::string& name,
                                               std::map<std::string, std::string> options = {}) {
  register_ch11_encodings();
  EncodingSpec spec;
  spec.model = small_decoder_config();
  spec.options = std::move(options);
  ag::Rng rng(1);
  return make_encoding(name, spec, rng);
}

std::string refusal(std::map<std::string, std::string> options) {
  try {
    make_small("pope", std::move(options));
  } catch (const ag::Error& e) {
    return e.what();
  }
  return "";
}

// A part of H heads of width D in float64, its phase bias drawn from U(-2 pi, 0).
std::unique_ptr<PopePositions> random_part(std::int64_t H, std::int64_t D, std::uint64_t seed,
                                           PopePhaseBias bias = PopePhaseBias::uniform) {
  ag::Rng rng(seed);
  PopeOptions options;
  options.phase_bias = bias;
  return std::make_unique<PopePositions>(H, D, options, rng, f64);
}

// The score q~ . k~ of one query vector at position m and one key vector at n, [1, H, 1, D]
// each, for head h (before attention's 1 / sqrt(D)).
double score(const AttentionPositions& part, const Tensor& q, const Tensor& k, std::int64_t m,
             std::int64_t n, std::int64_t h = 0) {
  const Tensor q_turned = part.rotate(q, q, m).first;
  const Tensor k_turned = part.rotate(k, k, n).second;
  const Tensor products = ag::sum(ag::mul(q_turned, k_turned), {3});  // [1, H, 1]
  return products.at({0, h, 0});
}

}  // namespace

// --- the formula -------------------------------------------------------------------------------

TEST(Ch11Pope, OneFrequencyPerCoordinateAsRopeForAHeadTwiceAsWide) {
  // theta_c = base^(-c/D) for c = 0 .. D-1: D frequencies, from 1 down to base^(-(D-1)/D)
  const std::vector<double> theta = pope_frequencies(8, 10000);
  ASSERT_EQ(theta.size(), 8u);
  for (std::size_t c = 0; c < theta.size(); ++c)
    EXPECT_DOUBLE_EQ(theta[c], std::pow(10000.0, -double(c) / 8.0)) << c;
  EXPECT_EQ(theta, rope_frequencies(16, 10000));
  EXPECT_EQ(pope_frequencies(3, 500).size(), 3u);  // any width, odd ones too
}

TEST(Ch11Pope, QueriesAndKeysBecomeTwiceAsWideMagnitudeTimesCosineThenSine) {
  // q~ = [mu cos(p theta), mu sin(p theta)] with mu = softplus(q); the key's phase adds delta
  const std::int64_t H = 2, T = 3, D = 4;
  const auto part = random_part(H, D, 1);
  ag::Rng rng(2);
  const Tensor q = ag::randn({1, H, T, D}, rng, f64), k = ag::randn({1, H, T, D}, rng, f64);
  const auto [q_turned, k_turned] = part->rotate(q, k, 5);
  ASSERT_EQ(q_turned.shape(), (ag::Shape{1, H, T, 2 * D}));
  ASSERT_EQ(k_turned.shape(), (ag::Shape{1, H, T, 2 * D}));
  const std::vector<double> theta = pope_frequencies(D, 10000);
  for (std::int64_t h = 0; h < H; ++h)
    for (std::int64_t t = 0; t < T; ++t)
      for (std::int64_t c = 0; c < D; ++c) {
        const double phi = double(5 + t) * theta[c], delta = part->phase_bias.at({h, c});
        const double mu_q = softplus(q.at({0, h, t, c})), mu_k = softplus(k.at({0, h, t, c}));
        EXPECT_NEAR(q_turned.at({0, h, t, c}), mu_q * std::cos(phi), 1e-15);
        EXPECT_NEAR(q_turned.at({0, h, t, D + c}), mu_q * std::sin(phi), 1e-15);
        EXPECT_NEAR(k_turned.at({0, h, t, c}), mu_k * std::cos(phi + delta), 1e-15);
        EXPECT_NEAR(k_turned.at({0, h, t, D + c}), mu_k * std::sin(phi + delta), 1e-15);
      }
}

// [pope-score-test]
TEST(Ch11Pope, ScoreIsTheSumOverFrequenciesOfMagnitudesTimesTheCosineOfTheOffset) {
  // The paper's score: q~_t . k~_s = sum_c softplus(q_tc) softplus(k_sc) cos((s - t) theta_c +
  // delta_c), from a plain loop, for every pair of a call at sampled positions, each head
  // with its own delta; two deltas lie outside [-2 pi, 0] and count as the nearer end.
  const std::int64_t H = 2, T = 4, D = 6;
  const auto part = random_part(H, D, 3);
  std::vector<double> delta = part->phase_bias.to_vector();
  delta[1] = 0.7;     // above 0: 0
  delta[D + 2] = -9;  // below -2 pi: -2 pi
  part->phase_bias.copy_from(ag::from_vector(delta, {H, D}, f64));
  ag::Rng rng(4);
  const Tensor q = ag::randn({1, H, T, D}, rng, f64), k = ag::randn({1, H, T, D}, rng, f64);
  const std::vector<std::int64_t> at{2, 7, 8, 30};
  const auto [q_turned, k_turned] = part->rotate(q, k, Positions(at));
  const Tensor scores = ag::matmul_transposed(q_turned, k_turned);  // [1, H, T, T]
  const std::vector<double> theta = pope_frequencies(D, 10000);
  for (std::int64_t h = 0; h < H; ++h)
    for (std::int64_t i = 0; i < T; ++i)
      for (std::int64_t j = 0; j < T; ++j) {
        double expected = 0;
        for (std::int64_t c = 0; c < D; ++c) {
          const double d = std::clamp(delta[h * D + c], -2 * M_PI, 0.0);
          expected += softplus(q.at({0, h, i, c})) * softplus(k.at({0, h, j, c})) *
                      std::cos(double(at[j] - at[i]) * theta[c] + d);
        }
        EXPECT_NEAR(scores.at({0, h, i, j}), expected, 1e-12) << h << "," << i << "," << j;
      }
}
// [pope-score-test]

// --- the defining property
// ------------------------------------------------------------------------

// [pope-offset-test]
TEST(Ch11Pope, ScoreOfFixedContentsDependsOnlyOnTheOffset) {
  // Query content at m, key content at n: moving both by the same s leaves every head's score
  // as it was (float64), whatever the contents and the deltas.
  const std::int64_t H = 2, D = 8;
  const auto part = random_part(H, D, 5);
  ag::Rng rng(6);
  for (int trial = 0; trial < 4; ++trial) {
    const Tensor q = ag::randn({1, H, 1, D}, rng, f64), k = ag::randn({1, H, 1, D}, rng, f64);
    for (const auto& [m, n] : {std::pair{0, 0}, {3, 1}, {1, 9}, {17, 4}})
      for (std::int64_t s : {1, 5, 64, 1000})
        for (std::int64_t h = 0; h < H; ++h)
          EXPECT_NEAR(score(*part, q, k, m + s, n + s, h), score(*part, q, k, m, n, h), 1e-12)
              << "m " << m << ", n " << n << ", shift " << s << ", head " << h;
  }
}
// [pope-offset-test]

TEST(Ch11Pope, WithoutPhaseBiasNoContentMovesThePeakOffOffsetZero) {
  // delta = 0: every term softplus(q_c) softplus(k_c) cos(d theta_c) is largest at d = 0, for
  // any contents, so the score is too; for equal q and k as well. RoPE's peak moves with the
  // content's angles (chapter 5): for the same vectors it lies elsewhere.
  const std::int64_t D = 8, reach = 40;
  const auto part = random_part(1, D, 7, PopePhaseBias::zero);
  const RotaryPositions rope(D);
  ag::Rng rng(8);
  const Tensor q = ag::randn({1, 1, 1, D}, rng, f64), k = ag::randn({1, 1, 1, D}, rng, f64);
  const std::int64_t m = reach;  // the query in the middle, keys on both sides
  const double at_zero = score(*part, q, k, m, m), equal_at_zero = score(*part, q, q, m, m);
  // per frequency: each term of q~ . k~ (coordinates c and c + D) is at most its value at 0
  const Tensor q_turned = part->rotate(q, q, m).first, k0 = part->rotate(k, k, m).second;
  std::int64_t rope_peak = 0;
  double rope_best = -1e300;
  for (std::int64_t d = -reach; d <= reach; ++d) {
    if (d != 0) {
      EXPECT_LT(score(*part, q, k, m, m + d), at_zero) << d;
      EXPECT_LT(score(*part, q, q, m, m + d), equal_at_zero) << d;
    }
    const Tensor kd = part->rotate(k, k, m + d).second;
    for (std::int64_t c = 0; c < D; ++c) {
      auto term = [&](const Tensor& key) {
        return q_turned.at({0, 0, 0, c}) * key.at({0, 0, 0, c}) +
               q_turned.at({0, 0, 0, D + c}) * key.at({0, 0, 0, D + c});
      };
      EXPECT_LE(term(kd), term(k0) + 1e-15) << d << ", frequency " << c;
    }
    const double r = score(rope, q, k, m, m + d);
    if (r > rope_best) rope_best = r, rope_peak = d;
  }
  EXPECT_NE(rope_peak, 0) << "RoPE's peak, moved by the contents' angles";
}

TEST(Ch11Pope, ThePhaseBiasMovesThePeakForEveryContentAlike) {
  // delta_c = -d0 theta_c for every frequency puts the peak at key offset n - m = d0 = 3 (the
  // cosines read (d - d0) theta_c), for any contents.
  const std::int64_t D = 8, d0 = 3;
  const auto part = random_part(1, D, 9, PopePhaseBias::zero);
  std::vector<double> delta;
  for (double theta : pope_frequencies(D, 10000)) delta.push_back(-double(d0) * theta);
  part->phase_bias.copy_from(ag::from_vector(delta, {1, D}, f64));
  ag::Rng rng(10);
  for (int trial = 0; trial < 3; ++trial) {
    const Tensor q = ag::randn({1, 1, 1, D}, rng, f64), k = ag::randn({1, 1, 1, D}, rng, f64);
    const double peak = score(*part, q, k, 20, 20 + d0);
    for (std::int64_t d = -20; d <= 20; ++d)
      if (d != d0) {
        EXPECT_LT(score(*part, q, k, 20, 20 + d), peak) << d;
      }
  }
}

// --- gradients
// ------------------------------------------------------------------------------------

TEST(Ch11Pope, RotatePassesGradcheckInFloat64) {
  // Through the part's rotate, to q, k and the phase bias (inside (-2 pi, 0): the clamp's
  // ends are kinks), at an offset as the cache calls it and at sampled positions.
  ag::Rng rng(11);
  const std::int64_t H = 2, T = 3, D = 4;
  auto part = random_part(H, D, 12);
  const Tensor q = ag::randn({1, H, T, D}, rng, f64), k = ag::randn({1, H, T, D}, rng, f64);
  const Tensor delta = ag::rand_uniform({H, D}, rng, -6.0, -0.3, f64);
  for (const Positions& at : {Positions(4), Positions({1, 6, 9})}) {
    const auto result = ag::gradcheck(
        [&](const std::vector<Tensor>& in) {
          part->phase_bias = in[2];
          const auto [q_turned, k_turned] = part->rotate(in[0], in[1], at);
          return ag::concat({q_turned, k_turned}, 2);
        },
        {q, k, delta});
    EXPECT_TRUE(result.passed) << result.report;
    EXPECT_EQ(result.checks, 2 * H * T * D + H * D);
  }
}

TEST(Ch11Pope, TheClampHoldsThePhaseBiasBetweenMinusTwoPiAndZero) {
  const Tensor delta = ag::from_vector({-9, -2 * M_PI, -3, -1e-9, 0, 0.5}, {6}, f64);
  const std::vector<double> held = pope_clamped_phase_bias(delta).to_vector();
  const std::vector<double> expected{-2 * M_PI, -2 * M_PI, -3, -1e-9, 0, 0};
  for (std::size_t i = 0; i < held.size(); ++i) EXPECT_NEAR(held[i], expected[i], 1e-15) << i;
  // the gradient is 1 inside and at 0, where delta starts, and 0 beyond the ends
  Tensor x = ag::from_vector({-9, -3, 0, 0.5}, {4}, f64);
  x.set_requires_grad();
  ag::sum(pope_clamped_phase_bias(x)).backward();
  EXPECT_EQ(x.grad().to_vector(), (std::vector<double>{0, 1, 1, 0}));
}

TEST(Ch11Pope, OneBlockModelPassesGradcheckInFloat64) {
  // Every parameter of the model, the phase bias among them (uniform: away from the clamp's
  // kink at 0, where "zero" starts it).
  ag::Rng rng(13);
  const auto result = gradcheck_one_block(make_small("pope", {{"phase_bias", "uniform"}}), rng);
  EXPECT_TRUE(result.passed) << result.report;
  EXPECT_GT(result.checks, 100);
}

TEST(Ch11Pope, EachLayerLearnsItsOwnPhaseBias) {
  ag::Rng rng(14);
  Decoder model(small_decoder_config(), make_small("pope", {{"phase_bias", "uniform"}}), rng);
  model.to(f64);
  const Tensor logits = model.forward({{1, 4, 2, 6, 0, 3}, {2, 3}});
  ag::sum(ag::mul(logits, logits)).backward();
  int seen = 0;
  for (const auto& [path, parameter] : model.named_parameters()) {
    if (path.find(".positions.") == std::string::npos) continue;
    ++seen;
    EXPECT_NE(path.find("phase_bias"), std::string::npos) << path;
    EXPECT_EQ(parameter.shape(), (ag::Shape{2, 8})) << path;  // [H, D]
    double largest = 0;
    for (double g : parameter.grad().to_vector()) largest = std::max(largest, std::fabs(g));
    EXPECT_GT(largest, 0) << path;
  }
  EXPECT_EQ(seen, 2);  // one per layer
}

// --- the cache
// ------------------------------------------------------------------------------------

TEST(Ch11Pope, CachedDecodingMatchesTheFullPassWithKeysTwiceAsWide) {
  for (const std::string bias : {"uniform", "zero", "none"}) {
    ag::Rng rng(15);
    Decoder model(small_decoder_config(), make_small("pope", {{"phase_bias", bias}}), rng);
    const auto in_float32 = cached_decoding_difference(model);
    EXPECT_LT(in_float32.one_by_one, 1e-5) << bias;
    EXPECT_LT(in_float32.chunks, 1e-5) << bias;
    model.to(f64);
    const auto difference = cached_decoding_difference(model);
    EXPECT_LT(difference.one_by_one, 1e-12) << bias;
    EXPECT_LT(difference.chunks, 1e-12) << bias;
    // the cache holds k~ [B, H, T, 2D], as the rotate hook returned it
    KVCache cache;
    model.forward({{1, 4, 2}, {1, 3}}, 0, &cache);
    model.forward({{5}, {1, 1}}, 3, &cache);
    EXPECT_EQ(cache.layers[1].keys.shape(), (ag::Shape{1, 2, 4, 16})) << bias;
    EXPECT_EQ(cache.layers[1].values.shape(), (ag::Shape{1, 2, 4, 8})) << bias;
  }
}

// --- through the lab
// ------------------------------------------------------------------------------

TEST(Ch11Pope, ATinyModelLearnsSavesAndResumesThroughTheLab) {
  register_chapter_encodings();
  // chapter 8's tiny model (2 layers, 2 heads of 8, length 8), trained long enough to learn
  TrainConfig c = tiny_length_config("pope");
  c.batch = 8;
  c.steps = 200;
  c.warmup = 2;
  c.lr = 1e-2;
  c.eval_every = c.steps;
  Trainer trainer(c);
  std::vector<double> losses;
  for (std::int64_t s = 0; s < c.steps; ++s) losses.push_back(trainer.step());
  const auto mean = [](auto first, auto last) {
    return std::accumulate(first, last, 0.0) / double(last - first);
  };
  const double early = mean(losses.begin(), losses.begin() + 5);
  const double late = mean(losses.end() - 5, losses.end());
  EXPECT_LT(late, 0.85 * early) << "first steps " << early << ", last steps " << late;
  // the phase biases are saved under their names and read back: the same numbers, and the
  // 2D-wide keys run at four times the training length
  const auto checkpoint = std::filesystem::temp_directory_path() /
                          ("pe_ch11_pope_" + std::to_string(::getpid()) + ".agt");
  trainer.save(checkpoint.string());
  const auto resumed = Trainer::resume(checkpoint.string());
  std::filesystem::remove(checkpoint);
  const Evaluation before = trainer.evaluate(32, 4), after = resumed->evaluate(32, 4);
  EXPECT_EQ(after.loss, before.loss);
  EXPECT_TRUE(std::isfinite(before.loss));
}

// --- the registry
// ---------------------------------------------------------------------------------

TEST(Ch11Pope, RegisteredWithItsOptionsAndDefaults) {
  register_ch11_encodings();
  bool found = false;
  for (const auto& entry : registered_encodings())
    if (entry.name == "pope") {
      found = true;
      EXPECT_EQ(entry.chapter, "11");
      EXPECT_EQ(entry.option_names, (std::vector<std::string>{"base", "magnitude", "phase_bias"}));
    }
  EXPECT_TRUE(found);
  const auto pope = std::dynamic_pointer_cast<PopeEncoding>(make_small("pope"));
  ASSERT_TRUE(pope);
  EXPECT_EQ(pope->options().base, 10000);
  EXPECT_EQ(pope->options().magnitude, PopeMagnitude::softplus);
  EXPECT_EQ(pope->options().phase_bias, PopePhaseBias::zero);
  const auto other = std::dynamic_pointer_cast<PopeEncoding>(
      make_small("pope", {{"base", "500"}, {"magnitude", "relu"}, {"phase_bias", "none"}}));
  EXPECT_EQ(other->options().base, 500);
  EXPECT_EQ(other->options().magnitude, PopeMagnitude::relu);
  EXPECT_EQ(other->options().phase_bias, PopePhaseBias::none);
  ag::Rng rng(16);
  EXPECT_TRUE(other->make_attention_part(rng)->named_parameters().empty());  // no delta
}

TEST(Ch11Pope, BadOptionsAreRefusedInOneLine) {
  const std::vector<std::pair<std::map<std::string, std::string>, std::string>> bad = {
      {{{"base", "1"}}, "base"},
      {{{"base", "-5"}}, "base"},
      {{{"base", "ten"}}, "base"},
      {{{"base", "inf"}}, "base"},
      {{{"magnitude", "tanh"}}, "magnitude"},
      {{{"magnitude", ""}}, "magnitude"},
      {{{"phase_bias", "random"}}, "phase_bias"},
      {{{"layout", "half"}}, "layout"}};
  for (const auto& [options, name] : bad) {
    const std::string message = refusal(options);
    EXPECT_NE(message.find(name), std::string::npos) << name << ": '" << message << "'";
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

TEST(Ch11Pope, InspectShowsTheFrequenciesAndEachLayersPhaseBias) {
  // Without a model: the frequencies and the start of one layer's delta (0 by default).
  const auto alone = make_small("pope")->inspect(4);
  ASSERT_EQ(alone.size(), 2u);
  EXPECT_EQ(alone[0].first, "frequencies");
  EXPECT_EQ(alone[0].second.to_vector(), pope_frequencies(8, 10000));
  EXPECT_EQ(alone[1].first, "phase_bias");
  EXPECT_EQ(alone[1].second.shape(), (ag::Shape{1, 2, 8}));
  for (double d : alone[1].second.to_vector()) EXPECT_EQ(d, 0);
  // With a model: each layer's delta as the scores see it, clamped.
  const auto encoding = make_small("pope");
  ag::Rng rng(17);
  Decoder model(small_decoder_config(), encoding, rng);
  auto& second = dynamic_cast<PopePositions&>(*model.blocks[1]->attention.positions);
  std::vector<double> delta(16, -1.0);
  delta[3] = -20;  // held at -2 pi
  second.phase_bias.copy_from(ag::from_vector(delta, {2, 8}, ag::Dtype::f32));
  const auto inspected = encoding->inspect(4);
  ASSERT_EQ(inspected[1].second.shape(), (ag::Shape{2, 2, 8}));
  EXPECT_EQ(inspected[1].second.at({0, 1, 3}), 0);
  EXPECT_EQ(inspected[1].second.at({1, 0, 0}), -1);
  EXPECT_NEAR(inspected[1].second.at({1, 0, 3}), -2 * M_PI, 1e-6);
  // Without a phase bias, the frequencies alone.
  EXPECT_EQ(make_small("pope", {{"phase_bias", "none"}})->inspect(4).size(), 1u);
}
