// Chapter 9, stage 1: KERPLE, FIRE, the dynamic position bias and xPos. Their defining
// properties, the cache, their gradients in float64, and their options.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <tuple>

#include "ag/gradcheck.hpp"
#include "chapters/01-attention/decoder.hpp"
#include "chapters/01-attention/encoding_registry.hpp"
#include "chapters/01-attention/permutation.hpp"
#include "chapters/01-attention/tests/model_check.hpp"
#include "chapters/06-alibi/alibi.hpp"
#include "chapters/09-learned-distance/learned_distance.hpp"

using namespace pe;
using ag::Tensor;

namespace {

constexpr auto f64 = ag::Dtype::f64;

// An encoding from the registry for the small test decoder (width 16, 2 heads, 2 layers).
std::shared_ptr<PositionalEncoding> make_small(const std::string& name,
                                               std::map<std::string, std::string> options = {},
                                               std::uint64_t seed = 1) {
  register_ch09_encodings();
  EncodingSpec spec;
  spec.model = small_decoder_config();
  spec.options = std::move(options);
  ag::Rng rng(seed);
  return make_encoding(name, spec, rng);
}

// The error text of make_small, or "" when it builds.
std::string refusal(const std::string& name, std::map<std::string, std::string> options) {
  try {
    make_small(name, std::move(options));
  } catch (const ag::Error& e) {
    return e.what();
  }
  return "";
}

// Every configuration the tests run through the decoder: each encoding, each form.
const std::vector<std::pair<std::string, std::map<std::string, std::string>>> kVariants = {
    {"kerple", {}},
    {"kerple", {{"form", "power"}}},
    {"kerple", {{"shared", "false"}}},
    {"fire", {}},
    {"fire", {{"transform", "none"}, {"shared", "true"}}},
    {"dpb", {}},
    {"dpb", {{"log_distance", "true"}, {"depth", "1"}, {"shared", "false"}}},
    {"xpos", {}},
};

std::string describe(const std::pair<std::string, std::map<std::string, std::string>>& variant) {
  std::string text = variant.first;
  for (const auto& [key, value] : variant.second) text += " " + key + "=" + value;
  return text;
}

}  // namespace

// --- KERPLE ---------------------------------------------------------------------------------

// grades: task 9.1
TEST(Ch09Kerple, LogAndPowerBiasEqualTheirClosedForm) {
  // Two heads, queries and keys at 0, 1, 2: d = [[0, 0, 0], [1, 0, 0], [2, 1, 0]] (future keys
  // count as 0). The numbers are the natural logarithms and roots of small integers, from
  // a table to 16 digits: ln 2 = 0.6931471805599453, ln 3 = 1.0986122886681098,
  // ln 5 = 1.6094379124341004, 2^1.5 = 2 sqrt 2 = 2.8284271247461901.
  const Tensor r1 = ag::from_vector({1.0, 0.5}, {2}, f64);
  const Tensor log_r2 = ag::from_vector({1.0, 2.0}, {2}, f64);
  // head 0: -1 log(1 + d); head 1: -0.5 log(1 + 2 d)
  const std::vector<double> log_expected{0,
                                         0,
                                         0,
                                         -0.6931471805599453,
                                         0,
                                         0,
                                         -1.0986122886681098,
                                         -0.6931471805599453,
                                         0,
                                         0,
                                         0,
                                         0,
                                         -0.5 * 1.0986122886681098,
                                         0,
                                         0,
                                         -0.5 * 1.6094379124341004,
                                         -0.5 * 1.0986122886681098,
                                         0};
  const Tensor log_bias = kerple_bias(KerpleForm::log, r1, log_r2, 3, 3, 0);
  ASSERT_EQ(log_bias.shape(), (ag::Shape{2, 3, 3}));
  const std::vector<double> got = log_bias.to_vector();
  for (std::size_t e = 0; e < got.size(); ++e) EXPECT_NEAR(got[e], log_expected[e], 1e-15) << e;
  // head 0: -1 d^1 (ALiBi with slope 1); head 1: -0.5 d^1.5
  const Tensor power_r2 = ag::from_vector({1.0, 1.5}, {2}, f64);
  const std::vector<double> power_expected{
      0, 0, 0, -1, 0, 0, -2, -1, 0, 0, 0, 0, -0.5, 0, 0, -0.5 * 2.8284271247461901, -0.5, 0};
  const std::vector<double> power =
      kerple_bias(KerpleForm::power, r1, power_r2, 3, 3, 0).to_vector();
  for (std::size_t e = 0; e < power.size(); ++e)
    EXPECT_NEAR(power[e], power_expected[e], 1e-15) << e;
  // one query at position 2 against keys 0..2 (the cache's case) is the last row
  EXPECT_EQ(kerple_bias(KerpleForm::log, r1, log_r2, 1, 3, 2).to_vector(),
            ag::reshape(ag::slice(log_bias, 1, 2, 3), {2, 1, 3}).to_vector());
}

// grades: task 9.1
TEST(Ch09Kerple, TheParameterisationGivesBackTheValuesSet) {
  ag::Rng rng(1);
  for (KerpleForm form : {KerpleForm::log, KerpleForm::power}) {
    KerpleBias kernel(3, form, rng, f64);
    kernel.set({0.25, 1.0, 7.5}, {0.01, 1.0, 1.99});
    const std::vector<double> r1 = kernel.r1().to_vector(), r2 = kernel.r2().to_vector();
    EXPECT_NEAR(r1[0], 0.25, 1e-14);
    EXPECT_NEAR(r1[2], 7.5, 1e-14);
    EXPECT_NEAR(r2[0], 0.01, 1e-14);
    EXPECT_NEAR(r2[2], 1.99, 1e-13);
    // and the bias is the closed form of those values
    EXPECT_LT(
        max_abs_difference(kernel.bias(5, 5, 0),
                           kerple_bias(form, ag::from_vector({0.25, 1.0, 7.5}, {3}, f64),
                                       ag::from_vector({0.01, 1.0, 1.99}, {3}, f64), 5, 5, 0)),
        1e-12);
    EXPECT_THROW(kernel.set({0.25, -1, 1}, {1, 1, 1}), ag::Error);  // r1 must be positive
  }
  KerpleBias power(1, KerpleForm::power, rng, f64);
  EXPECT_THROW(power.set({1}, {2}), ag::Error);  // 2 sigmoid(rho) never reaches 2
  // Any raw value gives r1, r2 > 0, and r2 < 2 in the power form.
  power.rho1.copy_from(ag::from_vector({-40}, {1}, f64));
  power.rho2.copy_from(ag::from_vector({30}, {1}, f64));
  EXPECT_GT(power.r1().item(), 0);
  EXPECT_LE(power.r2().item(), 2);
  power.rho2.copy_from(ag::from_vector({-30}, {1}, f64));
  EXPECT_GT(power.r2().item(), 0);
}

// grades: task 9.1
TEST(Ch09Kerple, InitialDrawsLieInTheOfficialRanges) {
  ag::Rng rng(7);
  KerpleBias log_kernel(64, KerpleForm::log, rng, f64),
      power_kernel(64, KerpleForm::power, rng, f64);
  for (double r1 : log_kernel.r1().to_vector()) EXPECT_TRUE(r1 >= 0.01 - 1e-12 && r1 < 2) << r1;
  for (double r2 : log_kernel.r2().to_vector()) EXPECT_TRUE(r2 >= 0.01 - 1e-12 && r2 < 1) << r2;
  for (double r1 : power_kernel.r1().to_vector()) EXPECT_TRUE(r1 >= 0.01 - 1e-12 && r1 < 1) << r1;
  for (double r2 : power_kernel.r2().to_vector()) EXPECT_TRUE(r2 >= 0.01 - 1e-12 && r2 < 2) << r2;
}

// grades: task 9.1
TEST(Ch09Kerple, BiasIsNonIncreasingInTheDistance) {
  // For every head and query, the bias never grows as the key moves further back, for any
  // r1, r2 > 0: here 16 heads of random draws of both forms, up to distance 299.
  for (KerpleForm form : {KerpleForm::log, KerpleForm::power}) {
    for (std::uint64_t seed : {1, 2, 3}) {
      ag::Rng rng(seed);
      KerpleBias kernel(16, form, rng, f64);
      const Tensor bias = kernel.bias(4, 300, 296);  // queries 296..299, keys 0..299
      for (std::int64_t h = 0; h < 16; ++h)
        for (std::int64_t i = 0; i < 4; ++i)
          for (std::int64_t j = 1; j <= 296 + i; ++j)  // key j - 1 is one further back than j
            EXPECT_LE(bias.at({h, i, j - 1}), bias.at({h, i, j}))
                << kerple_form_name(form) << " head " << h << " query " << 296 + i << " key " << j;
    }
  }
}

// grades: task 9.1
TEST(Ch09Kerple, PowerFormWithExponentOneIsAlibi) {
  // -r1 d^1 with r1 the ALiBi slopes: chapter 6's bias on every key a query can see
  const std::int64_t H = 4;
  const std::vector<double> slopes = alibi_slopes(H);
  const Tensor kerple = kerple_bias(KerpleForm::power, ag::from_vector(slopes, {H}, f64),
                                    ag::full({H}, 1.0, f64), 6, 9, 3);
  const Tensor alibi = alibi_bias(H, 6, 9, 3, f64);
  for (std::int64_t h = 0; h < H; ++h)
    for (std::int64_t i = 0; i < 6; ++i)
      for (std::int64_t j = 0; j <= 3 + i; ++j)
        EXPECT_DOUBLE_EQ(kerple.at({h, i, j}), alibi.at({h, i, j})) << h << " " << i << " " << j;
}

// --- FIRE -------------------------------------------------------------------------------------

// grades: task 9.2
TEST(Ch09Fire, NormalizedDistanceLiesInZeroOneAtEveryLengthUpTo4096) {
  // u[i, j] = psi(i - j) / (psi(max(L, i)) + eps) for every query i < 4096 and key j <= i,
  // with the paper's initial c and L, with a short threshold (then i, not L, normalises), and
  // without the log transform. One row per call, as a cache would ask for it.
  ag::NoGradGuard no_grad;
  struct Case {
    double c, L;
    FireTransform transform;
  };
  for (const Case& k : {Case{0.1, 512, FireTransform::log}, Case{3.0, 8, FireTransform::log},
                        Case{0.1, 100, FireTransform::none}}) {
    const Tensor c = ag::full({1}, k.c, f64), L = ag::full({1}, k.L, f64);
    double lowest = 1, highest = 0;
    for (std::int64_t i = 0; i < 4096; ++i) {
      const std::vector<double> u =
          fire_normalized_distance(c, L, k.transform, 1, i + 1, i).to_vector();
      for (double value : u) {
        lowest = std::min(lowest, value);
        highest = std::max(highest, value);
      }
      ASSERT_EQ(u.back(), 0.0) << "the query itself, at " << i;  // psi(0) = 0
    }
    EXPECT_GE(lowest, 0.0) << "c " << k.c << ", L " << k.L;
    EXPECT_LE(highest, 1.0) << "c " << k.c << ", L " << k.L;
    EXPECT_GT(highest, 0.99) << "past L the first key is at u = psi(i) / psi(i) (minus eps)";
  }
  // a whole block equals its rows asked one at a time: u depends on positions, not on the call
  const Tensor c = ag::full({1}, 0.1, f64), L = ag::full({1}, 4.0, f64);
  const Tensor block = fire_normalized_distance(c, L, FireTransform::log, 12, 12, 0);
  for (std::int64_t i = 0; i < 12; ++i)
    EXPECT_EQ(fire_normalized_distance(c, L, FireTransform::log, 1, 12, i).to_vector(),
              ag::reshape(ag::slice(block, 0, i, i + 1), {1, 12}).to_vector());
}

// grades: task 9.2
TEST(Ch09Fire, LinearFunctionWithoutTheLogReproducesAlibi) {
  // ALiBi as a FIRE (the paper shows it is one for a suitable f). Without the log transform
  // (psi(x) = x) and with a threshold L beyond every position, the input is
  // u = d / (max(L, i) + eps) = d / (L + eps): linear in the distance d. A linear f then gives
  // any line through 0: hidden unit 0 passes u through (weight 1, bias 0, and u >= 0 keeps the
  // ReLU's linear side), the other units stay at 0 (weights and biases 0), and the output
  // weight -slope_h (L + eps) turns u back into -slope_h d. With the log transform no linear f
  // can: log(1 + c d) is not linear in d for any c > 0.
  const std::int64_t H = 4, length = 40;
  FireOptions options;
  options.transform = FireTransform::none;
  options.threshold = 64;  // > every position 0 .. 39
  ag::Rng rng(1);
  FireBias fire(H, options, rng, f64);
  const double eps = 1e-6;
  const std::vector<double> slopes = alibi_slopes(H);
  std::vector<double> w1(static_cast<std::size_t>(options.width), 0.0),
      w2(static_cast<std::size_t>(options.width * H), 0.0);
  w1[0] = 1;
  for (std::int64_t h = 0; h < H; ++h) w2[h] = -slopes[h] * (options.threshold + eps);
  fire.f.layers[0]->weight.copy_from(ag::from_vector(w1, {1, options.width}, f64));
  fire.f.layers[0]->bias.copy_from(ag::zeros({options.width}, f64));
  fire.f.layers[1]->weight.copy_from(ag::from_vector(w2, {options.width, H}, f64));
  fire.f.layers[1]->bias.copy_from(ag::zeros({H}, f64));
  const Tensor bias = fire.bias(length, length, 0), alibi = alibi_bias(H, length, length, 0, f64);
  for (std::int64_t h = 0; h < H; ++h)
    for (std::int64_t i = 0; i < length; ++i)
      for (std::int64_t j = 0; j <= i; ++j)  // the keys a query sees (ALiBi's future differs)
        EXPECT_NEAR(bias.at({h, i, j}), alibi.at({h, i, j}), 1e-14) << h << " " << i << " " << j;
}

// grades: task 9.2
TEST(Ch09Fire, ThresholdAndCAreLearnedFromTheirInitialValues) {
  ag::Rng rng(1);
  FireBias fire(2, FireOptions{}, rng, f64);
  EXPECT_EQ(fire.c.item(), 0.1);
  EXPECT_EQ(fire.L_multiplier.item(), 1.0);
  EXPECT_EQ(fire.threshold().item(), 512.0);
  EXPECT_EQ(fire.f.layers.size(), 2u);  // one hidden layer
  EXPECT_EQ(fire.f.layers[0]->weight.shape(), (ag::Shape{1, 32}));
  EXPECT_EQ(fire.f.layers[1]->weight.shape(), (ag::Shape{32, 2}));
  // a negative c or multiplier gives the same function: the paper takes their absolute values
  const Tensor before = fire.bias(6, 6, 0);
  fire.c.copy_from(ag::full({1}, -0.1, f64));
  fire.L_multiplier.copy_from(ag::full({1}, -1.0, f64));
  EXPECT_EQ(fire.bias(6, 6, 0).to_vector(), before.to_vector());
}

// --- the dynamic position bias ------------------------------------------------------------

TEST(Ch09DynamicBias, BiasDependsOnlyOnTheDistance) {
  for (const bool log_distance : {false, true}) {
    DynamicBiasOptions options;
    options.width = 8;
    options.log_distance = log_distance;
    ag::Rng rng(3);
    DynamicPositionBias dpb(3, options, rng, f64);
    const Tensor bias = dpb.bias(20, 20, 0);
    const Tensor table = dpb.table(20);
    for (std::int64_t h = 0; h < 3; ++h)
      for (std::int64_t i = 0; i < 20; ++i)
        for (std::int64_t j = 0; j <= i; ++j) {
          EXPECT_EQ(bias.at({h, i, j}), table.at({i - j, h}));
          if (i + 7 < 20) {
            EXPECT_EQ(bias.at({h, i, j}), bias.at({h, i + 7, j + 7}));
          }
        }
    // with an offset, the rows of the full bias
    EXPECT_LT(max_abs_difference(dpb.bias(5, 20, 15), ag::slice(bias, 1, 15, 20)), 1e-14);
  }
}

TEST(Ch09DynamicBias, DefaultsAreXTransformers) {
  const auto dpb = std::dynamic_pointer_cast<DynamicBiasEncoding>(make_small("dpb"));
  ASSERT_TRUE(dpb);
  EXPECT_EQ(dpb->options().width, 4);  // model width 16 / 4
  EXPECT_EQ(dpb->options().depth, 2);
  EXPECT_FALSE(dpb->options().log_distance);
  ASSERT_TRUE(dpb->shared());
  const auto& f = static_cast<const DynamicPositionBias&>(*dpb->shared_function()).f;
  ASSERT_EQ(f.layers.size(), 3u);  // Linear(1, 4), SiLU, Linear(4, 4), SiLU, Linear(4, 2)
  EXPECT_EQ(f.layers[0]->weight.shape(), (ag::Shape{1, 4}));
  EXPECT_EQ(f.layers[1]->weight.shape(), (ag::Shape{4, 4}));
  EXPECT_EQ(f.layers[2]->weight.shape(), (ag::Shape{4, 2}));
  EXPECT_EQ(f.activation, MlpActivation::silu);
}

// --- xPos ---------------------------------------------------------------------------------------

// grades: task 9.3
TEST(Ch09Xpos, EachPlaneIsRopesShareTimesItsDecay) {
  // q . k = sum over planes i of (q_2i k_2i + q_2i+1 k_2i+1); xPos's share of plane i is RoPE's
  // times zeta_i^((m - n) / B), for a query at m and a key at n.
  const std::int64_t D = 8, T = 12;
  XposOptions options;
  options.scale_base = 4;  // a strong decay, so that a wrong exponent would show at once
  ag::Rng rng(5);
  const Tensor q = ag::randn({1, 1, T, D}, rng, f64), k = ag::randn({1, 1, T, D}, rng, f64);
  const auto [q_rope, k_rope] = RotaryPositions(D).rotate(q, k, 0);
  const auto [q_xpos, k_xpos] = XposPositions(D, options).rotate(q, k, 0);
  const std::vector<double> zeta = xpos_zeta(D, options.gamma);
  EXPECT_NEAR(zeta[0], 0.4 / 1.4, 1e-15);
  EXPECT_NEAR(zeta[3], (6.0 / 8 + 0.4) / 1.4, 1e-15);
  const auto share = [](const Tensor& a, const Tensor& b, std::int64_t m, std::int64_t n,
                        std::int64_t i) {
    return a.at({0, 0, m, 2 * i}) * b.at({0, 0, n, 2 * i}) +
           a.at({0, 0, m, 2 * i + 1}) * b.at({0, 0, n, 2 * i + 1});
  };
  for (std::int64_t m = 0; m < T; ++m)
    for (std::int64_t n = 0; n < T; ++n)
      for (std::int64_t i = 0; i < D / 2; ++i) {
        const double rope = share(q_rope, k_rope, m, n, i);
        const double decay = std::pow(zeta[i], double(m - n) / options.scale_base);
        EXPECT_NEAR(share(q_xpos, k_xpos, m, n, i), rope * decay,
                    1e-12 * (1 + std::fabs(rope * decay)))
            << "m " << m << ", n " << n << ", plane " << i;
      }
}

// grades: task 9.3
TEST(Ch09Xpos, ScoreDependsOnlyOnTheOffset) {
  // The same query vector at every position and the same key vector at every position: the
  // score of (m, n) equals that of (m + s, n + s), here with positions far from 0 too.
  const std::int64_t D = 8, T = 6;
  ag::Rng rng(6);
  const Tensor q_vector = ag::randn({1, 1, 1, D}, rng, f64),
               k_vector = ag::randn({1, 1, 1, D}, rng, f64);
  const Tensor q = ag::concat(std::vector<Tensor>(T, q_vector), 2);
  const Tensor k = ag::concat(std::vector<Tensor>(T, k_vector), 2);
  const XposPositions xpos(D);
  const auto scores = [&](std::int64_t offset) {
    const auto [qt, kt] = xpos.rotate(q, k, offset);
    return ag::matmul_transposed(qt, kt);  // [1, 1, T, T]
  };
  const Tensor at0 = scores(0);
  for (std::int64_t s : {1, 5, 100, 1000}) {
    const Tensor shifted = scores(s);
    EXPECT_LT(max_abs_difference(shifted, at0), 1e-11 * (1 + std::fabs(at0.at({0, 0, 0, 0}))))
        << "shift " << s;
  }
  // and within one pass, along each diagonal
  for (std::int64_t m = 0; m + 1 < T; ++m)
    for (std::int64_t n = 0; n + 1 < T; ++n)
      EXPECT_NEAR(at0.at({0, 0, m, n}), at0.at({0, 0, m + 1, n + 1}), 1e-12);
}

// grades: task 9.3
TEST(Ch09Xpos, DefaultsAreTorchscale) {
  const auto xpos = std::dynamic_pointer_cast<XposEncoding>(make_small("xpos"));
  ASSERT_TRUE(xpos);
  EXPECT_EQ(xpos->options().gamma, 0.4);
  EXPECT_EQ(xpos->options().scale_base, 512);
  EXPECT_EQ(xpos->options().base, 10000);
  EXPECT_TRUE(xpos->parameters().empty());
  const auto quantities = xpos->inspect(5);
  ASSERT_EQ(quantities.size(), 3u);
  EXPECT_EQ(quantities[2].first, "query_scale");
  EXPECT_EQ(quantities[2].second.shape(), (ag::Shape{5, 4}));
  // zeta_0^(4 / 512) for the query at 4: torchscale's (0 + 0.4 * 8) / (1.4 * 8)
  EXPECT_NEAR(quantities[2].second.at({4, 0}), std::pow(3.2 / 11.2, 4.0 / 512), 1e-15);
}

// --- all four through the decoder ----------------------------------------------------------

TEST(Ch09Decoder, CachedDecodingMatchesTheFullPass) {
  for (const auto& variant : kVariants) {
    ag::Rng rng(2);
    Decoder model(small_decoder_config(), make_small(variant.first, variant.second), rng);
    model.to(f64);
    const auto difference = cached_decoding_difference(model);
    EXPECT_LT(difference.one_by_one, 1e-12) << describe(variant);
    EXPECT_LT(difference.chunks, 1e-12) << describe(variant);
  }
}

TEST(Ch09Decoder, OneBlockModelPassesGradcheckInFloat64) {
  // Every parameter of the model, the encoding's (r1, r2; f, c, L) among them.
  for (const auto& variant : kVariants) {
    ag::Rng rng(3);
    const auto encoding = make_small(variant.first, variant.second);
    const auto result = gradcheck_one_block(encoding, rng);
    EXPECT_TRUE(result.passed) << describe(variant) << ": " << result.report;
    EXPECT_GT(result.checks, 100) << describe(variant);
  }
}

TEST(Ch09Decoder, GradientsReachTheEncodingsParameters) {
  // Every parameter the bias depends on gets a gradient, but two that it cannot feel: the
  // output bias of an MLP (f.1 of FIRE, f.2 of the dynamic bias) adds one constant to every
  // score of a head, which the softmax takes away; and c without the log transform, where
  // psi(x) = x does not read it.
  for (const auto& variant : kVariants) {
    ag::Rng rng(4);
    Decoder model(small_decoder_config(), make_small(variant.first, variant.second), rng);
    model.to(f64);  // a gradient that should be 0 is 0, not rounding
    const Tensor logits = model.forward({{1, 4, 2, 6, 0, 3}, {2, 3}});
    ag::sum(ag::mul(logits, logits)).backward();
    const bool reads_c = variant.second.count("transform") == 0;
    // the MLP's last layer: f.1 for FIRE, f.<depth> for the dynamic bias
    const std::int64_t depth = variant.first == "dpb" && !variant.second.count("depth") ? 2 : 1;
    for (const auto& [name, parameter] : model.named_parameters()) {
      if (name.find(".function.") == std::string::npos) continue;
      double largest = 0;
      if (parameter.grad().defined())
        for (double g : parameter.grad().to_vector()) largest = std::max(largest, std::fabs(g));
      const bool is_output_bias =
          name.find("f." + std::to_string(depth) + ".bias") != std::string::npos;
      if (is_output_bias || (!reads_c && name.substr(name.size() - 2) == ".c"))
        EXPECT_LT(largest, 1e-12) << describe(variant) << ": " << name;
      else
        EXPECT_GT(largest, 0) << describe(variant) << ": " << name;
    }
  }
}

TEST(Ch09Decoder, SharedOrPerLayerAsTheSourcesHaveIt) {
  // KERPLE's official code and x-transformers hand one module to every layer; FIRE's paper
  // gives each layer its own (FIRE-Shared is its variant). Two layers: count the functions.
  const auto functions = [](const std::string& name, std::map<std::string, std::string> options) {
    ag::Rng rng(1);
    Decoder model(small_decoder_config(), make_small(name, std::move(options)), rng);
    std::vector<std::string> prefixes;
    for (const auto& [path, parameter] : model.named_parameters()) {
      const auto at = path.find("function.");
      if (at == std::string::npos) continue;
      const std::string prefix = path.substr(0, at);
      if (std::find(prefixes.begin(), prefixes.end(), prefix) == prefixes.end())
        prefixes.push_back(prefix);
    }
    return prefixes;
  };
  EXPECT_EQ(functions("kerple", {}), (std::vector<std::string>{"encoding."}));
  EXPECT_EQ(functions("dpb", {}), (std::vector<std::string>{"encoding."}));
  EXPECT_EQ(functions("fire", {}), (std::vector<std::string>{"blocks.0.attention.positions.",
                                                             "blocks.1.attention.positions."}));
  EXPECT_EQ(functions("fire", {{"shared", "true"}}), (std::vector<std::string>{"encoding."}));
  EXPECT_EQ(functions("kerple", {{"shared", "false"}}).size(), 2u);
}

// --- the registry ---------------------------------------------------------------------------

TEST(Ch09Registry, RegisteredWithTheirOptions) {
  register_ch09_encodings();
  const std::vector<std::pair<std::string, std::vector<std::string>>> expected{
      {"kerple", {"form", "shared"}},
      {"fire", {"width", "c", "threshold", "transform", "shared"}},
      {"dpb", {"width", "depth", "log_distance", "shared"}},
      {"xpos", {"base", "gamma", "scale_base"}}};
  for (const auto& [name, options] : expected) {
    bool found = false;
    for (const auto& entry : registered_encodings())
      if (entry.name == name) {
        found = true;
        EXPECT_EQ(entry.chapter, "09");
        EXPECT_EQ(entry.option_names, options);
      }
    EXPECT_TRUE(found) << name;
  }
  const auto kerple = std::dynamic_pointer_cast<KerpleEncoding>(make_small("kerple"));
  ASSERT_TRUE(kerple);
  EXPECT_EQ(kerple->form(), KerpleForm::log);
  EXPECT_TRUE(kerple->shared());
  EXPECT_EQ(kerple->inspect(4).size(), 4u);  // distance, r1, r2, bias
  const auto fire = std::dynamic_pointer_cast<FireEncoding>(make_small("fire"));
  ASSERT_TRUE(fire);
  EXPECT_FALSE(fire->shared());
  EXPECT_EQ(fire->options().width, 32);
  EXPECT_EQ(fire->inspect(4).size(), 1u);  // the normalised distance: f lives in each layer
  EXPECT_EQ(fire->inspect(4)[0].second.shape(), (ag::Shape{4, 4}));
  const std::size_t count = registered_encodings().size();
  register_ch09_encodings();  // again: a no-op
  EXPECT_EQ(registered_encodings().size(), count);
}

TEST(Ch09Registry, BadOptionsAreRefusedInOneClearLine) {
  // {encoding, options, words the message must hold}
  const std::vector<std::tuple<std::string, std::map<std::string, std::string>, std::string>> bad{
      {"kerple", {{"form", "cubic"}}, "form must be log or power, got 'cubic'"},
      {"kerple", {{"shared", "maybe"}}, "shared must be true, false, 1 or 0"},
      {"kerple", {{"slope", "1"}}, "slope"},
      {"fire", {{"width", "0"}}, "width must be a whole number from 1 to 4096, got '0'"},
      {"fire", {{"width", "16.5"}}, "width must be a whole number"},
      {"fire", {{"c", "0"}}, "c must be positive"},
      {"fire", {{"c", "nan"}}, "c must be a finite number"},
      {"fire", {{"threshold", "-5"}}, "threshold (L) must be positive"},
      {"fire", {{"transform", "sqrt"}}, "transform must be log or none, got 'sqrt'"},
      {"dpb", {{"depth", "0"}}, "depth must be a whole number from 1 to 64"},
      {"dpb", {{"width", "4096"}, {"depth", "64"}}, "hidden weights, more than 16777216"},
      {"dpb", {{"log_distance", "yes"}}, "log_distance must be true, false, 1 or 0"},
      {"xpos", {{"gamma", "0"}}, "gamma must be positive"},
      {"xpos", {{"scale_base", "-512"}}, "scale_base must be positive"},
      {"xpos", {{"base", "1"}}, "base must be greater than 1"},
  };
  for (const auto& [name, options, words] : bad) {
    const std::string message = refusal(name, options);
    EXPECT_NE(message.find(words), std::string::npos) << name << ": '" << message << "'";
    EXPECT_NE(message.find(name), std::string::npos)
        << "the message names the encoding: " << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << "one line: " << message;
  }
  // xPos turns planes of two coordinates: an odd head width is refused
  EncodingSpec spec;
  spec.model = small_decoder_config();
  spec.model.width = 18;
  spec.model.heads = 2;  // D = 9
  ag::Rng rng(1);
  EXPECT_THROW(make_encoding("xpos", spec, rng), ag::Error);
}
