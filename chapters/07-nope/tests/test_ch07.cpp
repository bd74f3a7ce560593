// Chapter 7: without any positional encoding, the causal mask is the only source of order.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "ag/random.hpp"
#include "chapters/01-attention/decoder.hpp"
#include "chapters/01-attention/permutation.hpp"
#include "chapters/01-attention/tests/model_check.hpp"
#include "chapters/07-nope/position_probe.hpp"
#include "chapters/07-nope/probe.hpp"

using namespace pe;
using ag::Tensor;

namespace {

// The small test decoder (vocabulary 9, two blocks), with or without the causal mask.
DecoderConfig small_config(bool causal) {
  DecoderConfig c = small_decoder_config();
  c.causal = causal;
  return c;
}

// ids [1, T] reordered so that position i holds the token at position order[i].
ag::Indices reorder_ids(const std::vector<std::int64_t>& ids,
                        const std::vector<std::int64_t>& order) {
  ag::Indices out{{}, {1, std::int64_t(order.size())}};
  for (auto i : order) out.values.push_back(ids[i]);
  return out;
}

// [uniform-head]
// A one-head attention whose queries are zero: every score is 0, so the softmax spreads its
// weight evenly over the keys the mask leaves. Values and output are the identity, so the
// output is exactly that even average of the inputs.
void make_uniform_identity_head(SelfAttention& attention) {
  const std::int64_t C = attention.heads * attention.head_width;
  std::vector<double> identity(C * C, 0.0);
  for (std::int64_t i = 0; i < C; ++i) identity[i * C + i] = 1.0;
  const Tensor eye = ag::from_vector(identity, {C, C}, ag::Dtype::f64);
  const Tensor zero_matrix = ag::zeros({C, C}, ag::Dtype::f64);
  const Tensor zero_bias = ag::zeros({C}, ag::Dtype::f64);
  attention.query.weight.copy_from(zero_matrix);
  attention.query.bias.copy_from(zero_bias);
  attention.value.weight.copy_from(eye);
  attention.value.bias.copy_from(zero_bias);
  attention.output.weight.copy_from(eye);
  attention.output.bias.copy_from(zero_bias);
}
// [uniform-head]

// Random features, and targets that are a fixed linear function of them plus `noise`.
ProbeData linear_data(std::int64_t rows, std::int64_t cols, double noise, ag::Rng& rng) {
  ProbeData d;
  d.rows = rows;
  d.cols = cols;
  d.features = ag::randn({rows, cols}, rng, ag::Dtype::f64).to_vector();
  const auto eps = ag::randn({rows}, rng, ag::Dtype::f64).to_vector();
  for (std::int64_t r = 0; r < rows; ++r) {
    double y = 3.0;
    for (std::int64_t c = 0; c < cols; ++c) y += double(c + 1) * 0.5 * d.features[r * cols + c];
    d.targets.push_back(y + noise * eps[r]);
  }
  return d;
}

// An absolute encoding that adds t * u to the token at position t: the probe must read it.
struct RampEncoding : PositionalEncoding {
  std::string name() const override { return "ramp"; }
  Tensor embed(const Tensor& x, const Positions& at) const override {
    const std::int64_t T = x.size(1), C = x.size(2);
    std::vector<double> ramp(T * C);
    for (std::int64_t t = 0; t < T; ++t)
      for (std::int64_t c = 0; c < C; ++c) ramp[t * C + c] = double(at.at(t)) * (c % 2 ? 1 : -1);
    return ag::add(x, ag::from_vector(ramp, {T, C}, x.dtype()));
  }
};

ag::Indices random_ids(std::int64_t batch, std::int64_t length, std::int64_t vocab, ag::Rng& rng) {
  ag::Indices ids{{}, {batch, length}};
  for (std::int64_t i = 0; i < batch * length; ++i) ids.values.push_back(rng.randint(0, vocab));
  return ids;
}

}  // namespace

// ---- why order is invisible without the mask, and visible with it ----

// How far a two-block decoder without encoding is from permutation equivariance: the largest
// |difference| between its logits for a shuffled sequence and its shuffled logits.
double distance_from_equivariance(bool causal) {
  ag::Rng rng(1);
  Decoder model(small_config(causal), std::make_shared<NoEncoding>(), rng);
  model.to(ag::Dtype::f64);
  const std::vector<std::int64_t> ids{3, 1, 4, 1, 5, 2, 6, 8};
  const std::vector<std::int64_t> order{7, 2, 0, 5, 1, 6, 3, 4};
  std::vector<std::int64_t> identity(ids.size());
  std::iota(identity.begin(), identity.end(), 0);
  const Tensor logits = model.forward(reorder_ids(ids, identity));
  const Tensor permuted = model.forward(reorder_ids(ids, order));
  return max_abs_difference(permuted, reorder_positions(logits, order));
}

TEST(Ch07NoPE, BidirectionalModelIsPermutationEquivariant) {
  EXPECT_LT(distance_from_equivariance(/*causal=*/false), 1e-12);
}

TEST(Ch07NoPE, CausalModelIsNotPermutationEquivariant) {
  EXPECT_GT(distance_from_equivariance(/*causal=*/true), 1e-3);
}

TEST(Ch07NoPE, UniformCausalHeadComputesTheRunningMean) {
  ag::Rng rng(2);
  const std::int64_t T = 9, C = 4;
  SelfAttention attention(C, 1, rng, /*causal=*/true, ag::Dtype::f64);
  make_uniform_identity_head(attention);
  const Tensor x = ag::randn({1, T, C}, rng, ag::Dtype::f64);
  const auto in = x.to_vector();
  const auto out = attention.forward(x).to_vector();
  for (std::int64_t i = 0; i < T; ++i)
    for (std::int64_t c = 0; c < C; ++c) {
      double mean = 0;
      for (std::int64_t j = 0; j <= i; ++j) mean += in[j * C + c];
      mean /= double(i + 1);
      EXPECT_NEAR(out[i * C + c], mean, 1e-14) << "position " << i << ", channel " << c;
    }
}

// [one-over-position]
// Channel 0 is 1 in the first token and 0 in all others, the other channels noise; the uniform
// head's output in channel 0 at each of 16 positions.
std::vector<double> share_of_the_first_token(bool causal) {
  ag::Rng rng(3);
  const std::int64_t T = 16, C = 4;
  SelfAttention attention(C, 1, rng, causal, ag::Dtype::f64);
  make_uniform_identity_head(attention);
  std::vector<double> x = ag::randn({1, T, C}, rng, ag::Dtype::f64).to_vector();
  for (std::int64_t t = 0; t < T; ++t) x[t * C] = t == 0 ? 1.0 : 0.0;
  const Tensor out = attention.forward(ag::from_vector(x, {1, T, C}, ag::Dtype::f64));
  std::vector<double> share;
  for (std::int64_t i = 0; i < T; ++i) share.push_back(out.at({0, i, 0}));
  return share;
}

TEST(Ch07NoPE, ComponentOfTheFirstTokenShrinksAsOneOverPosition) {
  const auto share = share_of_the_first_token(/*causal=*/true);
  for (std::size_t i = 0; i < share.size(); ++i)
    EXPECT_NEAR(share[i], 1.0 / double(i + 1), 1e-15) << "position " << i;
}
// [one-over-position]

TEST(Ch07NoPE, WithoutTheMaskTheFirstTokenIsSpreadEvenly) {
  const auto share = share_of_the_first_token(/*causal=*/false);
  for (std::size_t i = 0; i < share.size(); ++i)
    EXPECT_NEAR(share[i], 1.0 / double(share.size()), 1e-15) << "position " << i;
}

TEST(Ch07NoPE, ARepeatedTokenGivesEveryPositionTheSameOutput) {
  // Every prefix of "AAAA..." holds the same multiset in the same proportions, so the
  // mask alone cannot tell its positions apart: the position signal needs varied content.
  ag::Rng rng(4);
  Decoder model(small_config(/*causal=*/true), std::make_shared<NoEncoding>(), rng);
  model.to(ag::Dtype::f64);
  const Tensor logits = model.forward(ag::Indices{{5, 5, 5, 5, 5, 5}, {1, 6}});
  const Tensor first = ag::slice(logits, 1, 0, 1);
  for (std::int64_t t = 1; t < 6; ++t)
    EXPECT_LT(max_abs_difference(ag::slice(logits, 1, t, t + 1), first), 1e-12) << t;
}

TEST(Ch07NoPE, OneBlockModelPassesGradcheckInFloat64) {
  ag::Rng rng(5);
  const auto result = gradcheck_one_block(std::make_shared<NoEncoding>(), rng);
  EXPECT_TRUE(result.passed) << result.report;
  EXPECT_GT(result.checks, 100);
}

TEST(Ch07NoPE, UniformHeadPassesGradcheckWithRespectToItsInput) {
  ag::Rng rng(6);
  SelfAttention attention(4, 1, rng, /*causal=*/true, ag::Dtype::f64);
  make_uniform_identity_head(attention);
  const Tensor x = ag::randn({2, 5, 4}, rng, ag::Dtype::f64);
  const auto result =
      ag::gradcheck([&](const std::vector<Tensor>& in) { return attention.forward(in[0]); }, {x});
  EXPECT_TRUE(result.passed) << result.report;
}

// ---- the linear probe ----

// grades: task 7.1
TEST(Ch07Probe, CholeskySolvesASmallSystem) {
  // A = [[4, 2], [2, 3]], x = (1, -2) -> b = (0, -4)
  const auto x = solve_symmetric_positive({4, 2, 2, 3}, {0, -4}, 2);
  EXPECT_NEAR(x[0], 1.0, 1e-14);
  EXPECT_NEAR(x[1], -2.0, 1e-14);
  EXPECT_THROW(solve_symmetric_positive({1, 2, 2, 1}, {1, 1}, 2), ag::Error);  // indefinite
  EXPECT_THROW(solve_symmetric_positive({1, 0, 0}, {1, 1}, 2), ag::Error);
}

// grades: task 7.2
TEST(Ch07Probe, RecoversAnExactlyLinearTarget) {
  ag::Rng rng(7);
  const ProbeData fit = linear_data(400, 12, 0.0, rng), test = linear_data(300, 12, 0.0, rng);
  const LinearProbe probe = fit_linear_probe(fit, 0.0);
  for (std::int64_t c = 0; c < 12; ++c) EXPECT_NEAR(probe.weights[c], 0.5 * double(c + 1), 1e-9);
  EXPECT_NEAR(probe.intercept, 3.0, 1e-9);
  const ProbeScore score = score_probe(probe, test);
  EXPECT_NEAR(score.r2, 1.0, 1e-12);
  EXPECT_LT(score.mae, 1e-9);
  // A small ridge shrinks the weights only a little.
  EXPECT_GT(score_probe(fit_linear_probe(fit, 1e-3), test).r2, 0.9999);
}

// grades: task 7.2
TEST(Ch07Probe, RidgeShrinksTheWeightAsTheNormalEquationsSay) {
  // One feature x = 0, 1, 2, 3 and y = 2x + 1: var(x) = 1.25, cov(x, y) = 2.5 (divided by N),
  // so w = 2.5 / (1.25 + lambda) and the line passes through the means (1.5, 4).
  ProbeData d;
  d.features = {0, 1, 2, 3};
  d.targets = {1, 3, 5, 7};
  d.rows = 4;
  d.cols = 1;
  for (const auto& [ridge, w] :
       std::vector<std::pair<double, double>>{{0.0, 2.0}, {1.25, 1.0}, {3.75, 0.5}}) {
    const LinearProbe probe = fit_linear_probe(d, ridge);
    ASSERT_EQ(probe.weights.size(), 1u);
    EXPECT_NEAR(probe.weights[0], w, 1e-12) << "ridge " << ridge;
    EXPECT_NEAR(probe.intercept, 4.0 - 1.5 * w, 1e-12) << "ridge " << ridge;
  }
}

// grades: task 7.2
TEST(Ch07Probe, FindsNothingInNoise) {
  ag::Rng rng(8);
  ProbeData fit = linear_data(4000, 8, 0.0, rng), test = linear_data(2000, 8, 0.0, rng);
  // targets independent of the features
  fit.targets = ag::randn({4000}, rng, ag::Dtype::f64).to_vector();
  test.targets = ag::randn({2000}, rng, ag::Dtype::f64).to_vector();
  const ProbeScore score = score_probe(fit_linear_probe(fit, 1e-3), test);
  EXPECT_LT(std::abs(score.r2), 0.02);
  EXPECT_GT(score.mae, 0.7);  // about E|N(0, 1)| = 0.80
}

TEST(Ch07Probe, BadShapesAndValuesAreErrors) {
  ag::Rng rng(9);
  ProbeData d = linear_data(10, 3, 0.0, rng);
  const LinearProbe probe = fit_linear_probe(d, 0.1);
  ProbeData short_targets = d;
  short_targets.targets.pop_back();
  EXPECT_THROW(fit_linear_probe(short_targets, 0.1), ag::Error);
  ProbeData wrong_cols = d;
  wrong_cols.cols = 4;
  EXPECT_THROW(fit_linear_probe(wrong_cols, 0.1), ag::Error);
  EXPECT_THROW(fit_linear_probe(d, -1.0), ag::Error);
  EXPECT_THROW(fit_linear_probe(linear_data(1, 3, 0.0, rng), 0.1), ag::Error);
  ProbeData two_cols = linear_data(10, 2, 0.0, rng);
  EXPECT_THROW(score_probe(probe, two_cols), ag::Error);  // probe reads 3 features
  ProbeData constant = d;
  constant.targets.assign(10, 2.0);
  EXPECT_THROW(score_probe(probe, constant), ag::Error);
  // collinear features and no ridge: the normal equations are singular
  ProbeData twin = d;
  for (std::int64_t r = 0; r < twin.rows; ++r) twin.features[r * 3 + 1] = twin.features[r * 3];
  EXPECT_THROW(fit_linear_probe(twin, 0.0), ag::Error);
  try {
    fit_linear_probe(short_targets, 0.1);
  } catch (const ag::Error& e) {
    EXPECT_NE(std::string(e.what()).find("9 targets for 10 samples"), std::string::npos)
        << e.what();
  }
}

// ---- the probe on models ----

// grades: task 7.3
TEST(Ch07Probe, LayerStatesAreTheEmbeddingThenEachBlock) {
  ag::Rng rng(10);
  Decoder model(small_config(true), std::make_shared<NoEncoding>(), rng);
  const ag::Indices ids = random_ids(2, 5, 9, rng);
  const auto states = layer_states(model, ids);
  ASSERT_EQ(states.size(), 3u);
  EXPECT_LT(max_abs_difference(states[0], model.tokens.forward(ids)), 1e-7);
  const auto hidden = model.hidden_states(ids);
  EXPECT_LT(max_abs_difference(states[2], hidden[1]), 1e-7);
  const ProbeData d = position_data(states[1]);
  EXPECT_EQ(d.rows, 10);
  EXPECT_EQ(d.cols, 16);
  EXPECT_EQ(d.targets[7], 2.0);  // sequence 1, position 2
  EXPECT_THROW(position_data(ag::zeros({2, 3})), ag::Error);
  EXPECT_THROW(probe_positions(model, ids, random_ids(2, 6, 9, rng), 1e-3), ag::Error);
}

// grades: task 7.4
TEST(Ch07Probe, FitsOnOneSetAndScoresOnTheOther) {
  // Each layer's probe is fitted on the states of fit_ids and scored on those of test_ids.
  ag::Rng rng(12);
  Decoder model(small_config(true), std::make_shared<RampEncoding>(), rng);
  model.to(ag::Dtype::f64);
  const ag::Indices fit = random_ids(6, 5, 9, rng), test = random_ids(4, 5, 9, rng);
  const auto scores = probe_positions(model, fit, test, 0.5);
  const auto fit_states = layer_states(model, fit), test_states = layer_states(model, test);
  ASSERT_EQ(scores.size(), fit_states.size());
  for (std::size_t l = 0; l < scores.size(); ++l) {
    const LinearProbe probe = fit_linear_probe(position_data(fit_states[l]), 0.5);
    const ProbeScore expected = score_probe(probe, position_data(test_states[l]));
    EXPECT_NEAR(scores[l].r2, expected.r2, 1e-9) << "layer " << l;
    EXPECT_NEAR(scores[l].mae, expected.mae, 1e-9) << "layer " << l;
    // and not on the states it was fitted to
    const ProbeScore on_fit = score_probe(probe, position_data(fit_states[l]));
    EXPECT_GT(std::abs(scores[l].mae - on_fit.mae), 1e-6) << "layer " << l;
  }
}

// grades: task 7.4
TEST(Ch07Probe, ReadsAnEncodedPositionAndNothingFromABidirectionalModel) {
  ag::Rng rng(11);
  const ag::Indices fit = random_ids(64, 12, 9, rng), test = random_ids(32, 12, 9, rng);
  // A ramp added to the embeddings is a linear function of position: R^2 = 1 at layer 0.
  Decoder ramp(small_config(true), std::make_shared<RampEncoding>(), rng);
  ramp.to(ag::Dtype::f64);
  EXPECT_GT(probe_positions(ramp, fit, test, 1e-6)[0].r2, 0.999);
  // Without mask and encoding, every state is a function of the token and the unordered
  // sequence, both independent of the position: nothing to read at any depth.
  Decoder bag(small_config(false), std::make_shared<NoEncoding>(), rng);
  bag.to(ag::Dtype::f64);
  for (const ProbeScore& s : probe_positions(bag, fit, test, 1e-3)) EXPECT_LT(s.r2, 0.1);
}
