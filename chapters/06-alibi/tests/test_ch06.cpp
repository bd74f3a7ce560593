// Chapter 6: ALiBi's slopes, its bias matrix, the cache, and its gradients.
#include <gtest/gtest.h>

#include <cmath>

#include "ag/gradcheck.hpp"
#include "chapters/01-attention/decoder.hpp"
#include "chapters/01-attention/encoding_registry.hpp"
#include "chapters/01-attention/permutation.hpp"
#include "chapters/01-attention/tests/model_check.hpp"
#include "chapters/06-alibi/alibi.hpp"

using namespace pe;
using ag::Tensor;

namespace {

constexpr auto f64 = ag::Dtype::f64;

// The small test decoder with 4 heads: slopes 1/4, 1/16, 1/64 and 1/256.
DecoderConfig four_head_config() {
  DecoderConfig c = small_decoder_config();
  c.heads = 4;
  return c;
}

}  // namespace

// grades: task 6.1
TEST(Ch06Alibi, SlopesMatchThePaperForOneToSixteenHeads) {
  // Written by hand as powers of two: slope = 2^-e for each listed e.
  const std::vector<std::vector<double>> exponents{
      {8},                            // H = 1: 2^(-8/1)
      {4, 8},                         // H = 2
      {4, 8, 2},                      // H = 3: H=2's, then every other of H=4's: 2^-2
      {2, 4, 6, 8},                   // H = 4
      {2, 4, 6, 8, 1},                // H = 5: H=4's, then H=8's 1st
      {2, 4, 6, 8, 1, 3},             // H = 6: ... 1st and 3rd
      {2, 4, 6, 8, 1, 3, 5},          // H = 7
      {1, 2, 3, 4, 5, 6, 7, 8},       // H = 8: 1/2, 1/4, ..., 1/256
      {1, 2, 3, 4, 5, 6, 7, 8, 0.5},  // H = 9: H=8's, then H=16's 1st, 3rd, ...
      {1, 2, 3, 4, 5, 6, 7, 8, 0.5, 1.5},
      {1, 2, 3, 4, 5, 6, 7, 8, 0.5, 1.5, 2.5},
      {1, 2, 3, 4, 5, 6, 7, 8, 0.5, 1.5, 2.5, 3.5},  // H = 12
      {1, 2, 3, 4, 5, 6, 7, 8, 0.5, 1.5, 2.5, 3.5, 4.5},
      {1, 2, 3, 4, 5, 6, 7, 8, 0.5, 1.5, 2.5, 3.5, 4.5, 5.5},
      {1, 2, 3, 4, 5, 6, 7, 8, 0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5},
      {0.5, 1, 1.5, 2, 2.5, 3, 3.5, 4, 4.5, 5, 5.5, 6, 6.5, 7, 7.5, 8},  // H = 16
  };
  for (std::size_t h = 0; h < exponents.size(); ++h) {
    const auto slopes = alibi_slopes(static_cast<std::int64_t>(h + 1));
    ASSERT_EQ(slopes.size(), h + 1);
    for (std::size_t i = 0; i <= h; ++i)
      EXPECT_DOUBLE_EQ(slopes[i], std::pow(2.0, -exponents[h][i]))
          << "H " << h + 1 << ", head " << i + 1 << " (heads counted from 1)";
  }
  // the powers of two exactly, as fractions
  const auto eight = alibi_slopes(8);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(eight[i], 1.0 / double(2 << i)) << "head " << i + 1;
  EXPECT_EQ(alibi_slopes(1)[0], 1.0 / 256);
  const std::vector<double> six{1.0 / 4, 1.0 / 16, 1.0 / 64, 1.0 / 256, 1.0 / 2, 1.0 / 8};
  EXPECT_EQ(alibi_slopes(6), six);
}

// grades: task 6.2
TEST(Ch06Alibi, BiasMatrixForTwoHeads) {
  // H = 2: slopes 1/16 and 1/256. bias[h, i, j] = -slope_h (i - j).
  Tensor bias = alibi_bias(2, 3, 3, 0, f64);
  ASSERT_EQ(bias.shape(), (ag::Shape{2, 3, 3}));
  const std::vector<double> expected{
      0, 1.0 / 16,  2.0 / 16,  -1.0 / 16,  0, 1.0 / 16,  -2.0 / 16,  -1.0 / 16,  0,
      0, 1.0 / 256, 2.0 / 256, -1.0 / 256, 0, 1.0 / 256, -2.0 / 256, -1.0 / 256, 0};
  EXPECT_EQ(bias.to_vector(), expected);
  // one query at position 4 against keys 0..4 (the cache case)
  Tensor last = alibi_bias(1, 1, 5, 4, f64);
  EXPECT_EQ(last.to_vector(),
            (std::vector<double>{-4.0 / 256, -3.0 / 256, -2.0 / 256, -1.0 / 256, 0}));
}

// grades: task 6.2
TEST(Ch06Alibi, BiasWithAnOffsetIsTheRowsOfTheFullBias) {
  Tensor full = alibi_bias(3, 7, 7, 0, f64);
  EXPECT_EQ(alibi_bias(3, 3, 7, 4, f64).to_vector(), ag::slice(full, 1, 4, 7).to_vector());
}

// grades: task 6.2
TEST(Ch06Alibi, ScoreTermDependsOnlyOnTheDistance) {
  // shifting query and key positions together leaves the bias unchanged
  for (std::int64_t heads : {1, 3, 8}) {
    Tensor bias = alibi_bias(heads, 12, 12, 0, f64);
    for (std::int64_t h = 0; h < heads; ++h)
      for (std::int64_t i = 0; i + 5 < 12; ++i)
        for (std::int64_t j = 0; j + 5 < 12; ++j)
          EXPECT_EQ(bias.at({h, i, j}), bias.at({h, i + 5, j + 5}));
  }
}

TEST(Ch06Alibi, HookAddsTheBiasToEveryBatchRow) {
  AlibiPositions alibi(2);
  ag::Rng rng(1);
  Tensor scores = ag::randn({3, 2, 4, 6}, rng, f64);
  Tensor out = alibi.bias(scores, Tensor(), Tensor(), 2);
  Tensor bias = alibi_bias(2, 4, 6, 2, f64);
  for (std::int64_t b = 0; b < 3; ++b)
    EXPECT_LT(max_abs_difference(
                  ag::reshape(ag::sub(ag::slice(out, 0, b, b + 1), ag::slice(scores, 0, b, b + 1)),
                              {2, 4, 6}),
                  bias),
              1e-15);
}

TEST(Ch06Alibi, CachedDecodingMatchesTheFullPass) {
  ag::Rng rng(2);
  Decoder model(four_head_config(), std::make_shared<AlibiEncoding>(4), rng);
  model.to(f64);
  const auto difference = cached_decoding_difference(model);
  EXPECT_LT(difference.one_by_one, 1e-12);
  EXPECT_LT(difference.chunks, 1e-12);
}

TEST(Ch06Alibi, OneBlockModelPassesGradcheckInFloat64) {
  ag::Rng rng(3);
  // small_decoder_config has 2 heads: slopes 1/16 and 1/256
  const auto result =
      gradcheck_one_block(std::make_shared<AlibiEncoding>(small_decoder_config().heads), rng);
  EXPECT_TRUE(result.passed) << result.report;
  EXPECT_GT(result.checks, 100);
}

TEST(Ch06Alibi, RegisteredWithoutParametersAndBadInputsAreErrors) {
  register_ch06_encodings();
  ag::Rng rng(4);
  EncodingSpec spec;
  spec.model = four_head_config();
  auto alibi = std::dynamic_pointer_cast<AlibiEncoding>(make_encoding("alibi", spec, rng));
  ASSERT_TRUE(alibi);
  EXPECT_EQ(alibi->heads(), 4);
  EXPECT_TRUE(alibi->parameters().empty());
  const auto quantities = alibi->inspect(5);
  ASSERT_EQ(quantities.size(), 2u);
  EXPECT_EQ(quantities[0].first, "slopes");
  EXPECT_EQ(quantities[0].second.to_vector(), alibi_slopes(4));
  EXPECT_EQ(quantities[1].first, "bias");
  EXPECT_EQ(quantities[1].second.shape(), (ag::Shape{4, 5, 5}));

  spec.options = {{"slope", "0.5"}};
  EXPECT_THROW(make_encoding("alibi", spec, rng), ag::Error);  // alibi has no options
  EXPECT_THROW(alibi_slopes(0), ag::Error);
  EXPECT_THROW(alibi_bias(2, 3, 3, -1, f64), ag::Error);
  EXPECT_THROW(AlibiEncoding(-2), ag::Error);
  Tensor scores = ag::zeros({1, 3, 2, 2}, f64);  // 3 heads, but the encoding has 4
  EXPECT_THROW(alibi->make_attention_part(rng)->bias(scores, Tensor(), Tensor(), 0), ag::Error);
  const std::size_t count = registered_encodings().size();
  EXPECT_NO_THROW(register_ch06_encodings());  // registering again is a no-op
  EXPECT_EQ(registered_encodings().size(), count);
}
