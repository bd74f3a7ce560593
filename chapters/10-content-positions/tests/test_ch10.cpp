// Chapter 10: CoPE and the forgetting gate. Their defining properties (open gates count
// tokens; a constant gate is ALiBi), the integer trick, the cache, memory, their gradients in
// float64, and their options.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <string>

#include "ag/gradcheck.hpp"
#include "ag/tensor_bytes.hpp"
#include "chapters/01-attention/decoder.hpp"
#include "chapters/01-attention/encoding_registry.hpp"
#include "chapters/01-attention/permutation.hpp"
#include "chapters/01-attention/tests/model_check.hpp"
#include "chapters/04-relative/shaw.hpp"
#include "chapters/06-alibi/alibi.hpp"
#include "chapters/10-content-positions/content_positions.hpp"

using namespace pe;
using ag::Tensor;

namespace {

constexpr auto f64 = ag::Dtype::f64;
// sigmoid(100) and sigmoid(-100) round to exactly 1 and (nearly) 0 in float64: open and shut
constexpr double kOpen = 100, kShut = -100;

// An encoding from the registry for the small test decoder (width 16, 2 heads, 2 layers).
std::shared_ptr<PositionalEncoding> make_small(const std::string& name,
                                               std::map<std::string, std::string> options = {}) {
  register_ch10_encodings();
  EncodingSpec spec;
  spec.model = small_decoder_config();
  spec.options = std::move(options);
  ag::Rng rng(1);
  return make_encoding(name, spec, rng);
}

std::string refusal(const std::string& name, std::map<std::string, std::string> options) {
  try {
    make_small(name, std::move(options));
  } catch (const ag::Error& e) {
    return e.what();
  }
  return "";
}

// A model of the small config whose CoPE tables are random (they start at 0, which would hide
// every path through the gates) and whose gates are not all alike.
std::unique_ptr<Decoder> small_model(const std::string& name, std::uint64_t seed) {
  ag::Rng rng(seed);
  auto model = std::make_unique<Decoder>(small_decoder_config(), make_small(name), rng);
  model->to(f64);
  for (auto& [path, parameter] : model->named_parameters())
    if (path.find("embeddings") != std::string::npos)
      parameter.copy_from(ag::randn(parameter.shape(), rng, f64));
  return model;
}

}  // namespace

// --- CoPE -----------------------------------------------------------------------------------

// grades: task 10.1
TEST(Ch10Cope, OpenGatesCountTokenDistancesInclusively) {
  // Every gate open: p_ij = i - j + 1 for j <= i (the key itself counts), 0 after the query.
  const std::int64_t T = 6;
  const Tensor p = cope_positions(cope_gates(ag::full({1, 1, T, T}, kOpen, f64), 0));
  for (std::int64_t i = 0; i < T; ++i)
    for (std::int64_t j = 0; j < T; ++j)
      EXPECT_EQ(p.at({0, 0, i, j}), j <= i ? double(i - j + 1) : 0.0) << i << "," << j;
  // The cache's case: two queries at 4 and 5 against keys 0 .. 5 are the last two rows.
  const Tensor tail = cope_positions(cope_gates(ag::full({1, 1, 2, T}, kOpen, f64), 4));
  EXPECT_EQ(tail.to_vector(), ag::slice(p, 2, 4, 6).to_vector());
}

// grades: task 10.1
TEST(Ch10Cope, PositionsCountOnlyTheKeysWhoseGatesOpen) {
  // A head that opens its gate on a chosen token only (keys 1, 3 and 4 here): the position of
  // key j is the number of chosen tokens from j to the query, whatever lies between them.
  const std::int64_t T = 6;
  const std::vector<double> chosen{kShut, kOpen, kShut, kOpen, kOpen, kShut};
  std::vector<double> scores;
  for (std::int64_t i = 0; i < T; ++i) scores.insert(scores.end(), chosen.begin(), chosen.end());
  const Tensor p = cope_positions(cope_gates(ag::from_vector(scores, {1, 1, T, T}, f64), 0));
  for (std::int64_t i = 0; i < T; ++i)
    for (std::int64_t j = 0; j <= i; ++j) {
      double count = 0;
      for (std::int64_t t = j; t <= i; ++t) count += chosen[t] > 0 ? 1 : 0;
      EXPECT_NEAR(p.at({0, 0, i, j}), count, 1e-30 * T) << i << "," << j;
    }
}

// grades: task 10.1
TEST(Ch10Cope, OpenGatesGiveTheLogitsOfALearnedRelativeEncoding) {
  // With every gate open p_ij = i - j + 1, so CoPE's term is q_i . e[i - j + 1] / sqrt(D):
  // Shaw's relative keys (chapter 4) with the table a[d] = e[1 - d] for d = j - i <= 0.
  const std::int64_t T = 5, D = 8, P = T + 1, k = T - 1;
  ag::Rng rng(2);
  const Tensor q = ag::randn({2, 2, T, D}, rng, f64), e = ag::randn({P, D}, rng, f64);
  const Tensor p = cope_positions(cope_gates(ag::full({2, 2, T, T}, kOpen, f64), 0));
  const Tensor cope = cope_position_logits(q, e, p);
  std::vector<double> rows(static_cast<std::size_t>((2 * k + 1) * D), 0.0);
  for (std::int64_t d = -k; d <= 0; ++d)  // row d + k holds e[1 - d]; rows after 0 stay unused
    for (std::int64_t c = 0; c < D; ++c) rows[(d + k) * D + c] = e.at({1 - d, c});
  const Tensor table = ag::from_vector(rows, {2 * k + 1, D}, f64);
  const Tensor shaw =
      ag::mul(shaw_key_term(q, table, shaw_clipped_index(T, T, 0, k)), 1.0 / std::sqrt(double(D)));
  for (std::int64_t b = 0; b < 2; ++b)
    for (std::int64_t h = 0; h < 2; ++h)
      for (std::int64_t i = 0; i < T; ++i)
        for (std::int64_t j = 0; j <= i; ++j)
          EXPECT_NEAR(cope.at({b, h, i, j}), shaw.at({b, h, i, j}), 1e-13);
}

// grades: task 10.1
TEST(Ch10Cope, TheIntegerTrickEqualsTheInterpolatedVector) {
  // At a fractional p the term is q . ((1 - w) e[floor p] + w e[ceil p]) / sqrt(D): interpolating
  // the integer logits gives the same number as interpolating the vectors. Past P - 1 it is
  // e[P - 1] (the clamp).
  const std::int64_t D = 4, P = 5;
  ag::Rng rng(3);
  const Tensor q = ag::randn({1, 1, 1, D}, rng, f64), e = ag::randn({P, D}, rng, f64);
  const std::vector<double> at{0.0, 0.25, 1.5, 2.75, 3.999, 4.0, 7.5};
  const std::int64_t K = std::int64_t(at.size());
  const Tensor term = cope_position_logits(q, e, ag::from_vector(at, {1, 1, 1, K}, f64));
  for (std::int64_t n = 0; n < K; ++n) {
    const double p = std::min(at[n], double(P - 1));
    const auto low = std::int64_t(std::floor(p)), high = std::int64_t(std::ceil(p));
    const double w = p - double(low);
    double expected = 0;
    for (std::int64_t c = 0; c < D; ++c)
      expected += q.at({0, 0, 0, c}) * ((1 - w) * e.at({low, c}) + w * e.at({high, c}));
    EXPECT_NEAR(term.at({0, 0, 0, n}), expected / std::sqrt(double(D)), 1e-14) << at[n];
  }
}

// grades: task 10.1
TEST(Ch10Cope, NeedsNoTensorOfInterpolatedVectors) {
  // T = 192, D = 64, one sequence and head, in float64: a [T, T, D] tensor of interpolated
  // vectors would be 18 MiB; CoPE's term needs score-sized tensors and the [T, P] integer
  // logits only. Measured as the largest total of tensor values alive at once, forward and
  // backward.
  const std::int64_t T = 192, D = 64, P = T + 1;
  ag::Rng rng(4);
  Tensor q = ag::randn({1, 1, T, D}, rng, f64), e = ag::randn({P, D}, rng, f64);
  Tensor scores = ag::randn({1, 1, T, T}, rng, f64);
  for (Tensor* t : {&q, &e, &scores}) t->set_requires_grad();
  CopePositions part(P, D, f64);
  part.embeddings.copy_from(e);
  const double scores_bytes = double(T * T * 8), vectors_bytes = double(T * T * D * 8);
  const std::int64_t before = ag::tensor_bytes().live;
  ag::reset_peak_tensor_bytes();
  ag::sum(part.bias(scores, q, Tensor(), 0)).backward();
  const double peak = double(ag::tensor_bytes().peak - before);
  EXPECT_LT(peak, 16 * scores_bytes) << peak / scores_bytes << " score-sized tensors";
  EXPECT_LT(peak, vectors_bytes / 4) << peak / vectors_bytes << " tensors of vectors";
}

// grades: task 10.1
TEST(Ch10Cope, TermPassesGradcheckInFloat64) {
  // Through the gates and the interpolation, to q, the scores and the table. The scores are
  // small so that the positions are fractional (not differentiable at the integers).
  ag::Rng rng(5);
  const std::int64_t T = 4, D = 3;
  const Tensor q = ag::randn({1, 2, T, D}, rng, f64), e = ag::randn({T + 1, D}, rng, f64);
  const Tensor scores = ag::mul(ag::randn({1, 2, T, T}, rng, f64), 0.5);
  const auto result = ag::gradcheck(
      [](const std::vector<Tensor>& in) {
        return cope_position_logits(in[0], in[1], cope_positions(cope_gates(in[2], 0)));
      },
      {q, e, scores});
  EXPECT_TRUE(result.passed) << result.report;
  EXPECT_GT(result.checks, 40);
}

// --- the forgetting gate ------------------------------------------------------------------------

// grades: task 10.2
TEST(Ch10Fox, AConstantGateIsAlibiWithSlopeMinusLogF) {
  // w = 0 and b_h = logit(f_h) with f_h = exp(-slope_h): every token forgets the same share, and
  // the bias is exactly ALiBi's matrix with ALiBi's slopes (chapter 6), after the query as well.
  const std::int64_t H = 4, T = 7, C = 16;
  ag::Rng rng(6);
  ForgettingGatePositions part(C, H, 0.0, rng, f64);
  std::vector<double> b;
  for (double slope : alibi_slopes(H)) {
    const double f = std::exp(-slope);
    b.push_back(std::log(f / (1 - f)));
  }
  part.gate.weight.copy_from(ag::zeros({C, H}, f64));
  part.gate.bias.copy_from(ag::from_vector(b, {H}, f64));
  const Tensor x = ag::randn({2, T, C}, rng, f64);
  const Tensor bias = part.content_bias(ag::zeros({2, H, T, T}, f64), x, 0, nullptr);
  const Tensor alibi = alibi_bias(H, T, T, 0, f64);
  for (std::int64_t n = 0; n < 2; ++n)
    EXPECT_LT(max_abs_difference(ag::reshape(ag::slice(bias, 0, n, n + 1), {H, T, T}), alibi),
              1e-12);
}

// grades: task 10.2
TEST(Ch10Fox, BiasIsTheSumOfLogGatesBetweenKeyAndQuery) {
  // D_ij = log f_(j+1) + ... + log f_i, from a plain double loop over random gates.
  const std::int64_t H = 2, T = 6, C = 16;
  ag::Rng rng(7);
  ForgettingGatePositions part(C, H, 1.0, rng, f64);
  const Tensor x = ag::randn({1, T, C}, rng, f64);
  const Tensor log_f = part.log_forget(x);  // [1, H, T]
  const Tensor bias = part.content_bias(ag::zeros({1, H, T, T}, f64), x, 0, nullptr);
  for (std::int64_t h = 0; h < H; ++h)
    for (std::int64_t i = 0; i < T; ++i)
      for (std::int64_t j = 0; j <= i; ++j) {
        double sum = 0;
        for (std::int64_t l = j + 1; l <= i; ++l) sum += log_f.at({0, h, l});
        EXPECT_NEAR(bias.at({0, h, i, j}), sum, 1e-14) << h << "," << i << "," << j;
      }
  // and log f is log sigmoid(w . x + b)
  const Tensor z = part.gate.forward(x);
  EXPECT_NEAR(log_f.at({0, 1, 3}), -std::log1p(std::exp(-z.at({0, 3, 1}))), 1e-14);
}

// grades: task 10.2
TEST(Ch10Fox, AGateFarBelowZeroStaysFinite) {
  // b = -1000: log f = -1000 from the stable log-sigmoid, where log(sigmoid) would be log 0.
  const std::int64_t H = 1, T = 3, C = 16;
  ag::Rng rng(8);
  ForgettingGatePositions part(C, H, -1000.0, rng, f64);
  part.gate.weight.copy_from(ag::zeros({C, H}, f64));
  const Tensor bias =
      part.content_bias(ag::zeros({1, H, T, T}, f64), ag::randn({1, T, C}, rng, f64), 0, nullptr);
  EXPECT_DOUBLE_EQ(bias.at({0, 0, 2, 0}), -2000.0);
  EXPECT_DOUBLE_EQ(bias.at({0, 0, 2, 2}), 0.0);
  EXPECT_TRUE(std::isinf(std::log(1 / (1 + std::exp(1000.0)))));  // what the naive form gives
}

// grades: task 10.2
TEST(Ch10Fox, TheCacheKeepsTheRunningSum) {
  // Tokens fed one at a time leave c_0 .. c_t in the cache slot, and each call's bias row equals
  // the full pass's row.
  const std::int64_t H = 2, T = 5, C = 16;
  ag::Rng rng(9);
  ForgettingGatePositions part(C, H, 2.0, rng, f64);
  const Tensor x = ag::randn({1, T, C}, rng, f64);
  const Tensor full = part.content_bias(ag::zeros({1, H, T, T}, f64), x, 0, nullptr);
  CacheSlot slot;
  for (std::int64_t t = 0; t < T; ++t) {
    const Tensor row =
        part.content_bias(ag::zeros({1, H, 1, t + 1}, f64), ag::slice(x, 1, t, t + 1), t, &slot);
    ASSERT_EQ(slot.tensor.shape(), (ag::Shape{1, H, t + 1}));
    EXPECT_LT(max_abs_difference(row, ag::slice(ag::slice(full, 2, t, t + 1), 3, 0, t + 1)), 1e-14);
  }
  EXPECT_LT(max_abs_difference(slot.tensor, forgetting_sums(part.log_forget(x))), 1e-14);
  // A call whose scores do not match the tokens seen is refused, and the slot is left as it was.
  const Tensor kept = slot.tensor;
  EXPECT_THROW(part.content_bias(ag::zeros({1, H, 1, 3}, f64), ag::slice(x, 1, 0, 1), T, &slot),
               ag::Error);
  EXPECT_EQ(slot.tensor.shape(), kept.shape());
}

// --- both through the decoder ------------------------------------------------------------------

TEST(Ch10Decoder, CachedDecodingMatchesTheFullPass) {
  for (const std::string name : {"cope", "fox"}) {
    const auto model = small_model(name, 2);
    const auto difference = cached_decoding_difference(*model);
    EXPECT_LT(difference.one_by_one, 1e-12) << name;
    EXPECT_LT(difference.chunks, 1e-12) << name;
  }
}

TEST(Ch10Decoder, OneBlockModelPassesGradcheckInFloat64) {
  // Every parameter of the model, the encoding's (CoPE's table at 0 as it starts; the gate's w
  // and b) among them. CoPE's paths through the gates are checked above with a random table.
  for (const std::string name : {"cope", "fox"}) {
    ag::Rng rng(3);
    const auto result = gradcheck_one_block(make_small(name), rng);
    EXPECT_TRUE(result.passed) << name << ": " << result.report;
    EXPECT_GT(result.checks, 100) << name;
  }
}

TEST(Ch10Decoder, GradientsReachTheEncodingsParameters) {
  for (const std::string name : {"cope", "fox"}) {
    const auto model = small_model(name, 4);
    const Tensor logits = model->forward({{1, 4, 2, 6, 0, 3}, {2, 3}});
    ag::sum(ag::mul(logits, logits)).backward();
    int seen = 0;
    for (const auto& [path, parameter] : model->named_parameters()) {
      if (path.find(".positions.") == std::string::npos) continue;
      ++seen;
      double largest = 0;
      for (double g : parameter.grad().to_vector()) largest = std::max(largest, std::fabs(g));
      EXPECT_GT(largest, 0) << name << ": " << path;
    }
    EXPECT_EQ(seen, name == "cope" ? 2 : 4) << name;  // a table, or w and b, per layer
  }
}

TEST(Ch10Decoder, ContentNotPositionDecides) {
  // Neither encoding reads an absolute position: the logits at sampled positions are the logits
  // at 0 .. T-1 (only the causal order matters).
  for (const std::string name : {"cope", "fox"}) {
    const auto model = small_model(name, 5);
    const ag::Indices ids{{1, 4, 2, 6, 0, 3}, {1, 6}};
    EXPECT_LT(max_abs_difference(model->forward(ids, Positions({2, 5, 11, 12, 30, 41})),
                                 model->forward(ids)),
              1e-13)
        << name;
  }
}

// --- the registry -------------------------------------------------------------------------------

TEST(Ch10Registry, RegisteredWithTheirOptions) {
  register_ch10_encodings();
  int found = 0;
  for (const auto& entry : registered_encodings()) {
    if (entry.name == "cope") {
      EXPECT_EQ(entry.option_names, (std::vector<std::string>{"npos"}));
    }
    if (entry.name == "fox") {
      EXPECT_EQ(entry.option_names, (std::vector<std::string>{"bias_init"}));
    }
    if (entry.chapter == "10") ++found;
  }
  EXPECT_EQ(found, 2);
  const auto cope = std::dynamic_pointer_cast<CopeEncoding>(make_small("cope"));
  ASSERT_TRUE(cope);
  EXPECT_EQ(cope->positions(), 33);  // the default training length 32, plus one
  EXPECT_EQ(
      std::dynamic_pointer_cast<CopeEncoding>(make_small("cope", {{"npos", "9"}}))->positions(), 9);
  const auto fox = std::dynamic_pointer_cast<ForgettingGateEncoding>(make_small("fox"));
  ASSERT_TRUE(fox);
  EXPECT_EQ(fox->bias_init(), 5.0);
}

TEST(Ch10Registry, BadOptionsAreRefused) {
  EXPECT_NE(refusal("cope", {{"npos", "1"}}).find("npos"), std::string::npos);
  EXPECT_NE(refusal("cope", {{"npos", "16.5"}}).find("npos"), std::string::npos);
  EXPECT_NE(refusal("cope", {{"base", "10"}}).find("base"), std::string::npos);
  EXPECT_NE(refusal("fox", {{"bias_init", "five"}}).find("bias_init"), std::string::npos);
  EXPECT_NE(refusal("fox", {{"bias_init", "nan"}}).find("bias_init"), std::string::npos);
}

TEST(Ch10Registry, InspectShowsTheCountAndTheStartingSlope) {
  const auto count = make_small("cope")->inspect(4);
  ASSERT_EQ(count.size(), 1u);
  EXPECT_EQ(count[0].second.to_vector(),
            (std::vector<double>{1, 0, 0, 0, 2, 1, 0, 0, 3, 2, 1, 0, 4, 3, 2, 1}));
  const auto fox = make_small("fox")->inspect(3);
  ASSERT_EQ(fox.size(), 2u);
  const double slope = std::log1p(std::exp(-5.0));  // -log sigmoid(5) = 0.00672
  EXPECT_NEAR(fox[0].second.at({1}), slope, 1e-15);
  EXPECT_NEAR(fox[1].second.at({0, 2, 0}), -2 * slope, 1e-15);
}
