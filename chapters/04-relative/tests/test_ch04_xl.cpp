// Chapter 4, Transformer-XL: the sinusoid of signed distances, the gathered position term,
// the four terms of the paper against a plain formula, and the gradients.
#include <gtest/gtest.h>

#include "ag/gradcheck.hpp"
#include "chapters/02-sinusoidal/sinusoidal.hpp"
#include "chapters/04-relative/tests/ch04_test_helpers.hpp"

using namespace pe;
using namespace pe::ch04_test;
using ag::Tensor;

TEST(Ch04TransformerXL, SinusoidOfSignedDistances) {
  const Tensor R = relative_sinusoid(-3, 7, 6, f64);  // distances -3 .. 3
  ASSERT_EQ(R.shape(), (ag::Shape{7, 6}));
  for (std::int64_t r = 0; r < 7; ++r)
    for (std::int64_t c = 0; c < 6; c += 2) {
      const double distance = double(r - 3), omega = std::pow(10000.0, -double(c) / 6.0);
      EXPECT_NEAR(R.at({r, c}), std::sin(distance * omega), 1e-15);
      EXPECT_NEAR(R.at({r, c + 1}), std::cos(distance * omega), 1e-15);
    }
  // the non-negative rows are chapter 2's table
  const Tensor table = sinusoidal_table(4, 6, 10000, SinusoidalLayout::interleaved, f64);
  EXPECT_EQ(max_abs_difference(ag::slice(R, 0, 3, 7), table), 0.0);
}

// grades: task 4.4
TEST(Ch04TransformerXL, PositionTermPicksTheColumnOfEachPairsDistance) {
  ag::Rng rng(1);
  const std::int64_t Tq = 3, Tk = 5, q_offset = 2;
  const Tensor query = ag::randn({2, 2, Tq, 4}, rng, f64);
  const Tensor projected = ag::randn({2, Tq + Tk - 1, 4}, rng, f64);
  const Tensor term = xl_position_term(query, projected, Tk);
  ASSERT_EQ(term.shape(), (ag::Shape{2, 2, Tq, Tk}));
  for (std::int64_t b = 0; b < 2; ++b)
    for (std::int64_t h = 0; h < 2; ++h)
      for (std::int64_t i = 0; i < Tq; ++i)
        for (std::int64_t j = 0; j < Tk; ++j) {
          // row r holds distance first + r, first = q_offset - (Tk - 1)
          const std::int64_t r = (q_offset + i - j) - (q_offset - (Tk - 1));
          double expected = 0;
          for (std::int64_t d = 0; d < 4; ++d)
            expected += query.at({b, h, i, d}) * projected.at({h, r, d});
          EXPECT_NEAR(term.at({b, h, i, j}), expected, 1e-13);
        }
}

TEST(Ch04TransformerXL, HooksGiveThePapersFourTerms) {
  // score_ij * sqrt(D) = q.k (a) + q.W_R R_{i-j} (b) + u.k (c) + v.W_R R_{i-j} (d), per head,
  // with W_R R split into heads of D columns; queries at q_offset + i.
  auto encoding = make_small("xl");
  auto& xl = dynamic_cast<TransformerXLEncoding&>(*encoding);
  const auto parts = make_parts(xl);
  ag::Rng rng(2);
  const std::int64_t Tq = 3, Tk = 6, q_offset = 3, H = 2, D = 8, C = 16;
  const Tensor q = ag::randn({1, H, Tq, D}, rng, f64), k = ag::randn({1, H, Tk, D}, rng, f64);
  for (std::size_t layer = 0; layer < parts.size(); ++layer) {
    const auto& part = dynamic_cast<const TransformerXLPositions&>(*parts[layer]);
    const Tensor scores = hooked_scores(part, q, k, q_offset);
    for (std::int64_t h = 0; h < H; ++h)
      for (std::int64_t i = 0; i < Tq; ++i)
        for (std::int64_t j = 0; j < Tk; ++j) {
          const Tensor R = relative_sinusoid(q_offset + i - j, 1, C, f64);  // [1, C]
          const Tensor WR = ag::matmul(R, part.projection);                 // [1, C]
          double a = 0, b = 0, c = 0, d = 0;
          for (std::int64_t x = 0; x < D; ++x) {
            const double position = WR.at({0, h * D + x});
            a += q.at({0, h, i, x}) * k.at({0, h, j, x});
            b += q.at({0, h, i, x}) * position;
            c += xl.u.at({h, 0, x}) * k.at({0, h, j, x});
            d += xl.v.at({h, 0, x}) * position;
          }
          EXPECT_NEAR(scores.at({0, h, i, j}), (a + b + c + d) / std::sqrt(double(D)), 1e-12)
              << "layer " << layer << ", head " << h << ", i " << i << ", j " << j;
        }
  }
}

// grades: task 4.4
TEST(Ch04TransformerXL, BiasHookMatchesTheShiftedQueryFormula) {
  // What the encoding computed before u . k became a bias term: the scores of the shifted
  // query, (q + u) . k / sqrt(D), plus (q + v) . W_R R_{i-j} / sqrt(D). Queries at 4 .. 6
  // against 7 keys, as in a cached step.
  auto encoding = make_small("xl");
  auto& xl = dynamic_cast<TransformerXLEncoding&>(*encoding);
  const auto parts = make_parts(xl);
  ag::Rng rng(3);
  const std::int64_t B = 2, H = 2, D = 8, C = 16, Tq = 3, Tk = 7, q_offset = 4;
  const Tensor q = ag::randn({B, H, Tq, D}, rng, f64), k = ag::randn({B, H, Tk, D}, rng, f64);
  for (const auto& part : parts) {
    const Tensor W_R = dynamic_cast<const TransformerXLPositions&>(*part).projection;
    const Tensor R = relative_sinusoid(q_offset - (Tk - 1), Tq + Tk - 1, C, f64);
    const Tensor projected =
        ag::permute(ag::reshape(ag::matmul(R, W_R), {Tq + Tk - 1, H, D}), {1, 0, 2});
    const Tensor shifted = ag::matmul_transposed(ag::add(q, xl.u), k);
    const Tensor position = xl_position_term(ag::add(q, xl.v), projected, Tk);
    const Tensor formula = ag::mul(ag::add(shifted, position), 1.0 / std::sqrt(double(D)));
    EXPECT_LT(max_abs_difference(hooked_scores(*part, q, k, q_offset), formula), 1e-12);
  }
}

TEST(Ch04TransformerXL, LeavesQueriesAndKeysUnrotated) {
  // u enters through bias alone, so rotate is the default and cached keys need nothing
  auto encoding = make_small("xl");
  const auto parts = make_parts(*encoding);
  ag::Rng rng(3);
  const Tensor q = ag::randn({2, 2, 4, 8}, rng, f64), k = ag::randn({2, 2, 4, 8}, rng, f64);
  const auto [rq, rk] = parts[1]->rotate(q, k, 5);
  EXPECT_EQ(max_abs_difference(rq, q), 0.0);
  EXPECT_EQ(max_abs_difference(rk, k), 0.0);
}

TEST(Ch04TransformerXL, EncodingPassesGradcheckInFloat64) {
  // the encoding alone: q.k and bias w.r.t. q, k, u, v and the W_R of both layers
  auto encoding = make_small("xl");
  const auto parts = make_parts(*encoding);
  ag::Rng rng(4);
  const Tensor q = ag::randn({1, 2, 3, 8}, rng, f64), k = ag::randn({1, 2, 5, 8}, rng, f64);
  std::vector<Tensor> inputs = encoding->parameters();
  for (const auto& part : parts)
    for (const Tensor& p : part->parameters()) inputs.push_back(p);
  ASSERT_EQ(inputs.size(), 4u);  // u, v, W_R, W_R
  inputs.push_back(q);
  inputs.push_back(k);
  const auto result = ag::gradcheck(
      [&](const std::vector<Tensor>& in) {
        const Tensor& queries = in[in.size() - 2];
        const Tensor& keys = in.back();
        return ag::concat({hooked_scores(*parts[0], queries, keys, 2),
                           hooked_scores(*parts[1], queries, keys, 2)},
                          0);
      },
      inputs);
  EXPECT_TRUE(result.passed) << result.report;
  const auto term = ag::gradcheck(
      [&](const std::vector<Tensor>& in) { return xl_position_term(in[0], in[1], 5); },
      {q, ag::randn({2, 7, 8}, rng, f64)});
  EXPECT_TRUE(term.passed) << term.report;
}
