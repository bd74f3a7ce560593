// Chapter 4, Shaw et al.: the clipped index matrix, the two terms (lean and pairwise) against
// plain loops, the memory each needs, the hooks' scale, and the gradients of the terms.
#include <gtest/gtest.h>

#include <algorithm>

#include "ag/gradcheck.hpp"
#include "ag/tensor_bytes.hpp"
#include "chapters/04-relative/tests/ch04_test_helpers.hpp"

using namespace pe;
using namespace pe::ch04_test;
using ag::Tensor;

namespace {

using Term = Tensor (*)(const Tensor&, const Tensor&, const ag::Indices&);

// Each check runs on both ways of computing a term: the one the model uses (a product per
// table row, then a gather or a scatter-add) and the pairwise tensor of the formula.
struct TermPair {
  const char* name;
  Term key, value;
};
const TermPair kTerms[] = {{"lean", shaw_key_term, shaw_value_term},
                           {"pairwise", shaw_key_term_pairwise, shaw_value_term_pairwise}};

}  // namespace

// grades: task 4.1
TEST(Ch04Shaw, ClippedIndexMatrixExactValues) {
  // k = 2: clip(j - i, -2, 2) + 2, queries and keys at 0 .. 4
  const ag::Indices index = shaw_clipped_index(5, 5, 0, 2);
  EXPECT_EQ(index.shape, (ag::Shape{5, 5}));
  const std::vector<std::int64_t> expected{2, 3, 4, 4, 4,  // i = 0: j - i = 0, 1, 2, 3 -> 2, 4 -> 2
                                           1, 2, 3, 4, 4,  //
                                           0, 1, 2, 3, 4,  //
                                           0, 0, 1, 2, 3,  // i = 3: j - i = -3 clips to -2
                                           0, 0, 0, 1, 2};
  EXPECT_EQ(index.values, expected);
  // two queries at positions 5 and 6 against keys 0 .. 6 (a cache of 5), k = 3
  const ag::Indices cached = shaw_clipped_index(2, 7, 5, 3);
  EXPECT_EQ(cached.values, (std::vector<std::int64_t>{0, 0, 0, 1, 2, 3, 4,  //
                                                      0, 0, 0, 0, 1, 2, 3}));
}

// grades: task 4.1
TEST(Ch04Shaw, IndexWithAnOffsetIsTheRowsOfTheFullIndex) {
  const ag::Indices full = shaw_clipped_index(9, 9, 0, 3);
  const ag::Indices rows = shaw_clipped_index(4, 9, 5, 3);
  EXPECT_EQ(rows.values, std::vector<std::int64_t>(full.values.begin() + 5 * 9, full.values.end()));
}

// grades: task 4.2
TEST(Ch04Shaw, KeyTermIsQueryDotTheVectorOfTheClippedDistance) {
  ag::Rng rng(1);
  const Tensor q = ag::randn({2, 3, 4, 5}, rng, f64), table = ag::randn({5, 5}, rng, f64);
  const ag::Indices index = shaw_clipped_index(4, 6, 2, 2);
  for (const TermPair& terms : kTerms) {
    SCOPED_TRACE(terms.name);
    const Tensor term = terms.key(q, table, index);
    ASSERT_EQ(term.shape(), (ag::Shape{2, 3, 4, 6}));
    for (std::int64_t b = 0; b < 2; ++b)
      for (std::int64_t h = 0; h < 3; ++h)
        for (std::int64_t i = 0; i < 4; ++i)
          for (std::int64_t j = 0; j < 6; ++j) {
            const std::int64_t row = std::clamp<std::int64_t>(j - (2 + i), -2, 2) + 2;
            double expected = 0;
            for (std::int64_t d = 0; d < 5; ++d)
              expected += q.at({b, h, i, d}) * table.at({row, d});
            EXPECT_NEAR(term.at({b, h, i, j}), expected, 1e-13);
          }
  }
}

TEST(Ch04Shaw, ValueTermIsTheWeightedSumOfTheVectors) {
  ag::Rng rng(2);
  const Tensor w = ag::randn({2, 3, 4, 6}, rng, f64), table = ag::randn({7, 5}, rng, f64);
  const ag::Indices index = shaw_clipped_index(4, 6, 2, 3);
  for (const TermPair& terms : kTerms) {
    SCOPED_TRACE(terms.name);
    const Tensor term = terms.value(w, table, index);
    ASSERT_EQ(term.shape(), (ag::Shape{2, 3, 4, 5}));
    for (std::int64_t b = 0; b < 2; ++b)
      for (std::int64_t h = 0; h < 3; ++h)
        for (std::int64_t i = 0; i < 4; ++i)
          for (std::int64_t d = 0; d < 5; ++d) {
            double expected = 0;
            for (std::int64_t j = 0; j < 6; ++j)
              expected += w.at({b, h, i, j}) *
                          table.at({std::clamp<std::int64_t>(j - (2 + i), -3, 3) + 3, d});
            EXPECT_NEAR(term.at({b, h, i, d}), expected, 1e-13);
          }
  }
}

// grades: task 4.2
TEST(Ch04Shaw, LeanTermsNeedNoPairwiseTensor) {
  // T = 256 queries and keys, D = 64, one sequence and head, in float64. The pairwise tensor of
  // one term alone is T*T*D*8 bytes = 32 MiB; the lean terms need their result, a [T, 2k+1]
  // product and the scores-sized weights: no factor D on the T*T part. Measured as the largest
  // total of tensor values alive at once, the tape of both terms included.
  const std::int64_t T = 256, D = 64, k = 16;
  ag::Rng rng(6);
  Tensor q = ag::randn({1, 1, T, D}, rng, f64), table = ag::randn({2 * k + 1, D}, rng, f64);
  Tensor w = ag::softmax(ag::randn({1, 1, T, T}, rng, f64)).detach();
  for (Tensor* t : {&q, &w, &table}) t->set_requires_grad();
  const ag::Indices index = shaw_clipped_index(T, T, 0, k);
  const double scores_bytes = double(T * T * 8), pairwise_bytes = double(T * T * D * 8);
  std::vector<double> peaks;
  for (const TermPair& terms : kTerms) {
    const std::int64_t before = ag::tensor_bytes().live;
    ag::reset_peak_tensor_bytes();
    const Tensor loss =
        ag::add(ag::sum(terms.key(q, table, index)), ag::sum(terms.value(w, table, index)));
    loss.backward();
    peaks.push_back(double(ag::tensor_bytes().peak - before));
    for (Tensor t : {q, w, table}) t.zero_grad();
  }
  // the lean pass: at most a few score-sized tensors at once (the key term, its gradient, the
  // weights' gradient); the pairwise pass: more than a whole pairwise tensor, so the count can
  // fail
  EXPECT_LT(peaks[0], 4 * scores_bytes) << peaks[0] / scores_bytes << " score-sized tensors";
  EXPECT_GT(peaks[1], pairwise_bytes) << peaks[1] / pairwise_bytes << " pairwise tensors";
}

// grades: task 4.2
TEST(Ch04Shaw, PairwiseOptionGivesTheSameTerms) {
  // the `pairwise` option changes how the terms are computed, not what they are
  const auto lean = make_small("shaw", {{"max_distance", "2"}});
  const auto pairwise = make_small("shaw", {{"max_distance", "2"}, {"pairwise", "true"}});
  const auto lean_part = make_parts(*lean)[0], pairwise_part = make_parts(*pairwise)[0];
  ag::Rng rng(7);
  const Tensor q = ag::randn({2, 2, 5, 8}, rng, f64), k = ag::randn({2, 2, 6, 8}, rng, f64);
  const Tensor w = ag::softmax(ag::randn({2, 2, 5, 6}, rng, f64));
  const Tensor zero = ag::zeros({2, 2, 5, 6}, f64), out = ag::zeros({2, 2, 5, 8}, f64);
  EXPECT_LT(max_abs_difference(lean_part->bias(zero, q, k, 1), pairwise_part->bias(zero, q, k, 1)),
            1e-13);
  EXPECT_LT(max_abs_difference(lean_part->values(out, w, 1), pairwise_part->values(out, w, 1)),
            1e-13);
}

// grades: task 4.2
TEST(Ch04Shaw, HooksUseTheTablesOfTheirLayerAndScaleTheKeyTermLikeTheScores) {
  auto encoding = make_small("shaw", {{"max_distance", "2"}});
  EXPECT_TRUE(encoding->parameters().empty());  // every table belongs to a layer's part
  const auto parts = make_parts(*encoding);
  ag::Rng rng(3);
  const Tensor q = ag::randn({1, 2, 3, 8}, rng, f64), k = ag::randn({1, 2, 3, 8}, rng, f64);
  const Tensor scores = ag::randn({1, 2, 3, 3}, rng, f64);
  const ag::Indices index = shaw_clipped_index(3, 3, 0, 2);
  for (const auto& part : parts) {
    const auto& shaw = dynamic_cast<const ShawPositions&>(*part);
    EXPECT_EQ(shaw.key_table.shape(), (ag::Shape{5, 8}));
    const Tensor expected =
        ag::add(scores, ag::mul(shaw_key_term(q, shaw.key_table, index), 1.0 / std::sqrt(8.0)));
    EXPECT_LT(max_abs_difference(shaw.bias(scores, q, k, 0), expected), 1e-14);
    const Tensor w = ag::softmax(scores), out = ag::randn({1, 2, 3, 8}, rng, f64).detach();
    EXPECT_LT(max_abs_difference(shaw.values(out, w, 0),
                                 ag::add(out, shaw_value_term(w, shaw.value_table, index))),
              1e-14);
  }
  // the two layers really have different tables
  EXPECT_GT(max_abs_difference(parts[0]->bias(scores, q, k, 0), parts[1]->bias(scores, q, k, 0)),
            1e-3);
}

// grades: task 4.2
TEST(Ch04Shaw, TermsPassGradcheckInFloat64) {
  ag::Rng rng(4);
  const Tensor q = ag::randn({2, 2, 4, 3}, rng, f64), table = ag::randn({5, 3}, rng, f64);
  const Tensor w = ag::softmax(ag::randn({2, 2, 4, 6}, rng, f64)).detach();
  const ag::Indices index = shaw_clipped_index(4, 6, 2, 2);
  for (const TermPair& terms : kTerms) {
    SCOPED_TRACE(terms.name);
    const auto keys = ag::gradcheck(
        [&](const std::vector<Tensor>& in) { return terms.key(in[0], in[1], index); }, {q, table});
    EXPECT_TRUE(keys.passed) << keys.report;
    const auto values = ag::gradcheck(
        [&](const std::vector<Tensor>& in) { return terms.value(in[0], in[1], index); },
        {w, table});
    EXPECT_TRUE(values.passed) << values.report;
  }
}

TEST(Ch04Shaw, EncodingHooksPassGradcheckInFloat64) {
  // one layer's part alone: its two terms w.r.t. q, the weights and both of its tables
  auto encoding = make_small("shaw", {{"max_distance", "2"}});
  const auto part = make_parts(*encoding)[1];
  ag::Rng rng(5);
  const Tensor q = ag::randn({1, 2, 4, 8}, rng, f64), out = ag::zeros({1, 2, 4, 8}, f64);
  const Tensor k = ag::randn({1, 2, 5, 8}, rng, f64);
  const Tensor w = ag::softmax(ag::randn({1, 2, 4, 5}, rng, f64)).detach();
  std::vector<Tensor> inputs = part->parameters();
  inputs.push_back(q);
  inputs.push_back(w);
  const auto result = ag::gradcheck(
      [&](const std::vector<Tensor>& in) {
        const Tensor scores = part->bias(ag::zeros({1, 2, 4, 5}, f64), in[in.size() - 2], k, 1);
        const Tensor added = part->values(out, in.back(), 1);
        return ag::concat({ag::reshape(scores, {-1}), ag::reshape(added, {-1})}, 0);
      },
      inputs);
  EXPECT_TRUE(result.passed) << result.report;
}
