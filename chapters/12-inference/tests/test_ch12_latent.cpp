// Chapter 12: DeepSeek's latent attention with decoupled RoPE, the absorption trick, why RoPE
// on the content keys would forbid it, the latent cache's bytes, and the small model's training.
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "ag/error.hpp"
#include "ag/gradcheck.hpp"
#include "chapters/01-attention/permutation.hpp"
#include "chapters/05-rope/rope.hpp"
#include "chapters/12-inference/cache_memory.hpp"
#include "chapters/12-inference/latent_attention.hpp"
#include "chapters/12-inference/latent_training.hpp"

namespace pe {
namespace {

// A shape small enough for element-by-element gradient checks.
LatentShape tiny_shape() { return {16, 2, 4, 6, 4, 10000}; }

// A number for RecordProperty in %g form (std::to_string would print 1e-15 as 0.000000).
std::string shown(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", value);
  return text;
}

double max_abs(const ag::Tensor& t) {
  double worst = 0;
  for (double v : t.to_vector()) worst = std::max(worst, std::abs(v));
  return worst;
}

TEST(Ch12Latent, AbsorbedScoresAndOutputsEqualExpandedInFloat64) {
  ag::Rng rng(1);
  LatentAttention attention({}, rng, ag::Dtype::f64);
  const ag::Tensor x = ag::randn({2, 9, 64}, rng, ag::Dtype::f64);
  const ag::Tensor expanded = attention.scores(x, LatentMode::expanded);
  const ag::Tensor absorbed = attention.scores(x, LatentMode::absorbed);
  EXPECT_EQ(expanded.shape(), (ag::Shape{2, 8, 9, 9}));
  RecordProperty("float64_score_difference", shown(max_abs_difference(expanded, absorbed)));
  EXPECT_LT(max_abs_difference(expanded, absorbed), 1e-12);
  EXPECT_LT(max_abs_difference(attention.forward(x, 0, nullptr, LatentMode::expanded),
                               attention.forward(x, 0, nullptr, LatentMode::absorbed)),
            1e-12);
}

// In float32 the two modes sum different products in a different order: they agree to a few
// ulps of the scores' magnitude, not bit for bit.
TEST(Ch12Latent, AbsorbedScoresEqualExpandedInFloat32ToRoundOff) {
  ag::Rng rng(2);
  LatentAttention attention({}, rng, ag::Dtype::f32);
  const ag::Tensor x = ag::randn({2, 9, 64}, rng, ag::Dtype::f32);
  const ag::Tensor expanded = attention.scores(x, LatentMode::expanded);
  const double difference = max_abs_difference(expanded, attention.scores(x, LatentMode::absorbed));
  const double ulp = FLT_EPSILON * max_abs(expanded);
  RecordProperty("float32_score_difference_in_ulps", shown(difference / ulp));
  EXPECT_LT(difference, 16 * ulp);
  const ag::Tensor out = attention.forward(x, 0, nullptr, LatentMode::expanded);
  EXPECT_LT(max_abs_difference(out, attention.forward(x, 0, nullptr, LatentMode::absorbed)),
            16 * FLT_EPSILON * max_abs(out));
}

// The absorbed matrices are W_UQ_h W_UK_h^T and W_UV_h W_O_h, head by head.
// The decoupled rotary key keeps RoPE's defining property: a pass over the same tokens at
// positions s .. s+T-1 gives the same output for every s (only differences of positions count).
TEST(Ch12Latent, OutputDependsOnlyOnRelativePositions) {
  ag::Rng rng(9);
  LatentAttention attention({}, rng, ag::Dtype::f64);
  const ag::Tensor x = ag::randn({2, 6, 64}, rng, ag::Dtype::f64);
  const ag::Tensor at_zero = attention.forward(x);
  for (const std::int64_t shift : {1, 7, 100}) {
    EXPECT_LT(max_abs_difference(at_zero, attention.forward(x, shift)), 1e-12) << shift;
    EXPECT_LT(
        max_abs_difference(at_zero, attention.forward(x, shift, nullptr, LatentMode::absorbed)),
        1e-12)
        << shift;
  }
  // and the positions matter: the same tokens in another order give another last output
  const ag::Tensor swapped =
      ag::concat({ag::slice(x, 1, 1, 2), ag::slice(x, 1, 0, 1), ag::slice(x, 1, 2, 6)}, 1);
  EXPECT_GT(max_abs_difference(ag::slice(at_zero, 1, 5, 6),
                               ag::slice(attention.forward(swapped), 1, 5, 6)),
            1e-6);
}

TEST(Ch12Latent, AbsorbedMatricesAreTheProductsOfEachHead) {
  ag::Rng rng(3);
  const LatentShape shape = tiny_shape();
  LatentAttention attention(shape, rng, ag::Dtype::f64);
  const AbsorbedLatent absorbed = attention.absorbed();
  const std::int64_t D = shape.head_width, Dc = shape.latent_width;
  for (std::int64_t h = 0; h < shape.heads; ++h) {
    const ag::Tensor w_uq = ag::slice(attention.query.weight, 1, h * D, (h + 1) * D);
    const ag::Tensor w_uk = ag::slice(attention.up_key.weight, 1, h * D, (h + 1) * D);
    EXPECT_LT(max_abs_difference(ag::slice(absorbed.query_latent, 1, h * Dc, (h + 1) * Dc),
                                 ag::matmul_transposed(w_uq, w_uk)),
              1e-14);
    const ag::Tensor w_uv = ag::slice(attention.up_value.weight, 1, h * D, (h + 1) * D);
    const ag::Tensor w_o = ag::slice(attention.output.weight, 0, h * D, (h + 1) * D);
    EXPECT_LT(max_abs_difference(ag::slice(absorbed.latent_output, 0, h * Dc, (h + 1) * Dc),
                                 ag::matmul(w_uv, w_o)),
              1e-14);
  }
}

// Why DeepSeek decouples RoPE. Rotate the content keys and queries themselves:
// q_m . k_n = x_m W_UQ_h R_m R_n^T W_UK_h^T c_n = x_m (W_UQ_h R_{m-n} W_UK_h^T) c_n, so the
// matrix between x and c depends on the offset m - n. The matrix fitted at one offset gives
// round-off there and scores far off at every other offset; the decoupled design's single
// matrix is right at all of them.
TEST(Ch12Latent, RopeOnTheContentKeysCannotBeAbsorbed) {
  ag::Rng rng(4);
  const LatentShape shape{64, 8, 8, 16, 8, 10000};
  LatentAttention attention(shape, rng, ag::Dtype::f64);
  const std::int64_t T = 10, D = shape.head_width;
  const ag::Tensor x = ag::randn({1, T, 64}, rng, ag::Dtype::f64);
  const auto [cos, sin] = rope_tables(T, D, shape.rope_base, ag::Dtype::f64);
  auto rotated = [&](const ag::Tensor& t, const Positions& at) {  // t [..., T, d_h]
    return apply_rotary(t, at, cos, sin, RotaryLayout::adjacent);
  };
  // head 0's content query and key, rotated at their positions: the naive design
  const ag::Tensor latents = attention.down_kv.forward(x);  // [1, T, d_c]
  const ag::Tensor q = ag::slice(attention.query.forward(x), -1, 0, D);
  const ag::Tensor k = ag::slice(attention.up_key.forward(latents), -1, 0, D);
  const ag::Tensor naive = ag::matmul_transposed(rotated(q, 0), rotated(k, 0));  // [1, T, T]
  const ag::Tensor w_uq = ag::slice(attention.query.weight, 1, 0, D);            // [C, d_h]
  const ag::Tensor w_uk = ag::slice(attention.up_key.weight, 1, 0, D);           // [d_c, d_h]
  const double magnitude = max_abs(naive);
  for (const std::int64_t fitted : {0, 3}) {
    // W_UQ R_fitted W_UK^T: W_UQ's rows rotated as a query at position `fitted` would be
    const ag::Tensor w_uq_turned =
        ag::reshape(rotated(ag::reshape(w_uq, {64, 1, D}), fitted), {64, D});
    const ag::Tensor matrix = ag::matmul_transposed(w_uq_turned, w_uk);  // [C, d_c]
    const ag::Tensor absorbed = ag::matmul_transposed(ag::matmul(x, matrix), latents);
    double on_offset = 0, off_offset = 0;
    for (std::int64_t m = 0; m < T; ++m)
      for (std::int64_t n = 0; n < T; ++n) {
        const double error = std::abs(naive.at({0, m, n}) - absorbed.at({0, m, n}));
        (m - n == fitted ? on_offset : off_offset) =
            std::max(m - n == fitted ? on_offset : off_offset, error);
      }
    RecordProperty("naive_rope_relative_error_fitted_at_" + std::to_string(fitted),
                   shown(off_offset / magnitude));
    EXPECT_LT(on_offset, 1e-12 * magnitude) << "fitted at offset " << fitted;
    EXPECT_GT(off_offset, 0.25 * magnitude) << "fitted at offset " << fitted;
  }
  // the control: with the decoupled rotary key, one matrix serves every offset
  EXPECT_LT(max_abs_difference(attention.scores(x, LatentMode::expanded),
                               attention.scores(x, LatentMode::absorbed)),
            1e-12 * magnitude);
}

TEST(Ch12Latent, GradcheckLatentAttentionBothModes) {
  for (const LatentMode mode : {LatentMode::expanded, LatentMode::absorbed}) {
    ag::Rng rng(5);
    LatentAttention attention(tiny_shape(), rng, ag::Dtype::f64);
    ag::Tensor x = ag::randn({2, 3, 16}, rng, ag::Dtype::f64);
    std::vector<ag::Tensor> inputs = attention.parameters();
    inputs.push_back(x);
    const ag::GradcheckResult result = ag::gradcheck(
        [&](const std::vector<ag::Tensor>&) { return attention.forward(x, 0, nullptr, mode); },
        inputs);
    EXPECT_TRUE(result.passed) << result.report;
    EXPECT_GT(result.checks, 0);
  }
}

TEST(Ch12Latent, GradcheckLatentDecoder) {
  ag::Rng rng(6);
  LatentDecoderConfig config;
  config.vocab = 9;
  config.attention = tiny_shape();
  config.layers = 1;
  config.ffn_width = 32;
  LatentDecoder model(config, rng, ag::Dtype::f64);
  const ag::Indices ids{{1, 4, 2, 6, 0, 3}, {2, 3}};
  const ag::GradcheckResult result = ag::gradcheck(
      [&](const std::vector<ag::Tensor>&) { return model.forward(ids); }, model.parameters());
  EXPECT_TRUE(result.passed) << result.report;
}

// The serving path: one token at a time, the cache holding only latents and rotary keys, the
// scores taken against the latents through the absorbed matrices.
TEST(Ch12Latent, CachedAbsorbedDecodingGivesTheFullPassLogits) {
  ag::Rng rng(7);
  LatentDecoderConfig config;
  config.vocab = 9;
  config.layers = 2;
  LatentDecoder model(config, rng, ag::Dtype::f64);
  const ag::Indices ids{{1, 4, 2, 6, 0, 3, 5, 1, 2, 3, 4, 0, 8, 7}, {2, 7}};
  ag::NoGradGuard no_grad;
  const ag::Tensor full = model.forward(ids);
  for (const LatentMode mode : {LatentMode::absorbed, LatentMode::expanded}) {
    LatentCache cache;
    double worst = 0;
    for (std::int64_t t = 0; t < 7; ++t) {
      const ag::Tensor logits =
          model.forward({{ids.values[t], ids.values[7 + t]}, {2, 1}}, t, &cache, mode);
      worst = std::max(worst, max_abs_difference(logits, ag::slice(full, 1, t, t + 1)));
    }
    EXPECT_LT(worst, 1e-10);
    ASSERT_EQ(cache.layers.size(), 2u);
    EXPECT_EQ(cache.length(), 7);
    EXPECT_EQ(cache.layers[0].latents.shape(), (ag::Shape{2, 7, 16}));
    EXPECT_EQ(cache.layers[0].rotary_keys.shape(), (ag::Shape{2, 7, 8}));
  }
  // chunks of 4 then 3, with matrices absorbed once and kept, as a server keeps them
  LatentCache cache;
  const ag::Tensor first = model.forward({{1, 4, 2, 6, 1, 2, 3, 4}, {2, 4}}, 0, &cache);
  std::vector<AbsorbedLatent> kept;
  for (const auto& block : model.blocks) kept.push_back(block->attention.absorbed());
  // the rest by hand through each block, absorbed with the kept matrices
  ag::Tensor x = model.tokens.forward({{0, 3, 5, 0, 8, 7}, {2, 3}});
  for (std::size_t i = 0; i < model.blocks.size(); ++i) {
    LatentBlock& block = *model.blocks[i];
    const ag::Tensor h =
        ag::add(x, block.attention.forward(block.norm1.forward(x), 4, &cache.layers[i], kept[i]));
    x = ag::add(h, block.contract.forward(
                       block.expand.forward(block.norm2.forward(h), ag::Activation::relu)));
  }
  const ag::Tensor rest = model.head.forward(model.final_norm.forward(x));
  EXPECT_LT(max_abs_difference(ag::concat({first, rest}, 1), full), 1e-10);
}

TEST(Ch12Latent, BadShapesAndOffsetsAreErrors) {
  ag::Rng rng(8);
  LatentShape odd = tiny_shape();
  odd.rotary_width = 3;
  EXPECT_THROW(LatentAttention(odd, rng), ag::Error);
  LatentShape zero = tiny_shape();
  zero.latent_width = 0;
  EXPECT_THROW(LatentAttention(zero, rng), ag::Error);
  LatentAttention attention(tiny_shape(), rng, ag::Dtype::f64);
  EXPECT_THROW(attention.forward(ag::zeros({1, 3, 15}, ag::Dtype::f64)), ag::Error);
  LatentLayerCache cache;
  attention.forward(ag::zeros({1, 3, 16}, ag::Dtype::f64), 0, &cache);
  EXPECT_THROW(attention.forward(ag::zeros({1, 1, 16}, ag::Dtype::f64), 2, &cache), ag::Error);
  EXPECT_THROW(attention.forward(ag::zeros({2, 1, 16}, ag::Dtype::f64), 3, &cache), ag::Error);
}

// The bytes the caches really hold equal the formulas; the large models' rows are the
// formulas at their published sizes.
TEST(Ch12Latent, CacheBytesMeasuredEqualTheFormulas) {
  const SmallCacheSizes sizes;
  const std::vector<CacheBytesRow> rows = cache_bytes_table(sizes);
  ASSERT_EQ(rows.size(), 7u);
  // small: 2 L H d_h = 2*2*8*8, 2 L G d_h = 2*2*2*8, L (d_c + d_R) = 2*(16+8), 4 bytes each
  EXPECT_EQ(rows[0].elements_per_token, 256);
  EXPECT_EQ(rows[1].elements_per_token, 64);
  EXPECT_EQ(rows[2].elements_per_token, 48);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(rows[i].bytes_per_element, 4);
    EXPECT_DOUBLE_EQ(rows[i].measured_bytes_per_token, rows[i].bytes_per_token)
        << rows[i].attention;
  }
  EXPECT_DOUBLE_EQ(rows[3].bytes_per_token, 2.0 * 61 * 128 * 128 * 2);  // DeepSeek-V3 as MHA
  EXPECT_DOUBLE_EQ(rows[4].bytes_per_token, 61.0 * (512 + 64) * 2);     // its MLA: 70,272
  EXPECT_DOUBLE_EQ(rows[5].bytes_per_token, 2.0 * 32 * 32 * 128 * 2);   // Llama-3-8B as MHA
  EXPECT_DOUBLE_EQ(rows[6].bytes_per_token, 2.0 * 32 * 8 * 128 * 2);    // its GQA: 131,072
  for (std::size_t i = 3; i < rows.size(); ++i) EXPECT_LT(rows[i].measured_bytes_per_token, 0);
  const std::string table = cache_bytes_markdown(rows);
  EXPECT_NE(table.find("| DeepSeek-V3 (L = 61, bf16) | MLA (d_c = 512, d_R = 64) | 35136 | 2 | "
                       "70272 | - |"),
            std::string::npos)
      << table;
  EXPECT_THROW(gqa_cache_elements(32, 0, 128), ag::Error);
}

TEST(Ch12Latent, TrainingLowersTheLossAndDecodesWithTheCache) {
  LatentTraining run;
  run.layers = 1;
  run.batch = 16;
  run.eval_sequences = 32;
  run.warmup = 5;
  const LatentResult result = train_latent_model("shiftk", 40, 3, {}, run);
  EXPECT_EQ(result.task, "shiftk");
  EXPECT_EQ(result.steps, 40);
  EXPECT_LT(result.final_loss, result.first_loss - 0.1);
  EXPECT_GE(result.accuracy, 0.0);
  EXPECT_LE(result.accuracy, 1.0);
  EXPECT_GT(result.held_out_loss, 0.0);
  EXPECT_GT(result.seconds, 0.0);
  EXPECT_GT(result.parameters, 0);
  EXPECT_LT(result.cached_decoding_difference, 1e-4);
  EXPECT_THROW(train_latent_model("no-such-task", 1, 1), ag::Error);
  EXPECT_THROW(train_latent_model("shiftk", 0, 1), ag::Error);
}

}  // namespace
}  // namespace pe
