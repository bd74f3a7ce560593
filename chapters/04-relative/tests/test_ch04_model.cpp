// Chapter 4, all three encodings in a model: registration and options, scores that depend
// only on j - i, decoding with a cache, and the one-block gradient check.
#include <gtest/gtest.h>

#include "ag/gradcheck.hpp"
#include "chapters/01-attention/tests/model_check.hpp"
#include "chapters/04-relative/tests/ch04_test_helpers.hpp"

using namespace pe;
using namespace pe::ch04_test;
using ag::Tensor;

namespace {

const char* const kEncodings[] = {"shaw", "xl", "t5"};

}  // namespace

TEST(Ch04Relative, RegisteredWithTheirOptions) {
  register_ch04_encodings();
  for (const auto& [name, options] : std::vector<std::pair<std::string, std::vector<std::string>>>{
           {"shaw", {"max_distance", "pairwise"}},
           {"xl", {}},
           {"t5", {"buckets", "max_distance", "bidirectional"}}}) {
    bool found = false;
    for (const auto& entry : registered_encodings())
      if (entry.name == name) {
        found = true;
        EXPECT_EQ(entry.chapter, "04");
        EXPECT_EQ(entry.option_names, options);
      }
    EXPECT_TRUE(found) << name;
  }
  auto shaw = std::dynamic_pointer_cast<ShawEncoding>(make_small("shaw"));
  ASSERT_TRUE(shaw);
  EXPECT_EQ(shaw->max_distance(), 16);  // the default
  EXPECT_FALSE(shaw->pairwise());       // the lean terms unless asked
  EXPECT_TRUE(std::dynamic_pointer_cast<ShawEncoding>(make_small("shaw", {{"pairwise", "true"}}))
                  ->pairwise());
  auto t5 = std::dynamic_pointer_cast<T5Encoding>(make_small("t5"));
  ASSERT_TRUE(t5);
  EXPECT_EQ(t5->table.shape(), (ag::Shape{32, 2}));  // one table for all layers
  EXPECT_EQ(t5->options().max_distance, 128);
  EXPECT_FALSE(t5->options().bidirectional);
  const auto shaw_inspect = shaw->inspect(4);
  ASSERT_EQ(shaw_inspect.front().first, "index");
  EXPECT_EQ(shaw_inspect.front().second.at({3, 0}), 13.0);  // clip(0 - 3) + 16
}

TEST(Ch04Relative, EachParameterIsRegisteredOnceWhereItBelongs) {
  // per-layer tables under their layer's attention, shared ones under the encoding
  const std::map<std::string, std::vector<std::pair<std::string, ag::Shape>>> expected{
      {"shaw",
       {{"blocks.0.attention.positions.key_table", {33, 8}},
        {"blocks.0.attention.positions.value_table", {33, 8}},
        {"blocks.1.attention.positions.key_table", {33, 8}},
        {"blocks.1.attention.positions.value_table", {33, 8}}}},
      {"xl",
       {{"encoding.u", {2, 1, 8}},
        {"encoding.v", {2, 1, 8}},
        {"blocks.0.attention.positions.w_r", {16, 16}},
        {"blocks.1.attention.positions.w_r", {16, 16}}}},
      {"t5", {{"encoding.table", {32, 2}}}}};
  for (const auto& [name, parameters] : expected) {
    ag::Rng rng(1);
    Decoder model(small_decoder_config(), make_small(name), rng);
    std::vector<std::pair<std::string, ag::Shape>> found;
    for (const auto& [parameter, tensor] : model.named_parameters())
      if (parameter.find("encoding.") == 0 || parameter.find(".positions.") != std::string::npos)
        found.emplace_back(parameter, tensor.shape());
    EXPECT_EQ(found, parameters) << name;
  }
}

TEST(Ch04Relative, PartsKeepHandlesToTheSharedParameters) {
  // a dtype conversion and training change u, v and T5's table in place, and every layer's
  // part sees the change (make_small's encodings are float64)
  ag::Rng rng(1);
  auto xl = std::dynamic_pointer_cast<TransformerXLEncoding>(make_small("xl"));
  Decoder model(small_decoder_config(), xl, rng);
  model.to(ag::Dtype::f32);
  xl->u.copy_from(ag::full(xl->u.shape(), 3.0, ag::Dtype::f32));
  for (const auto& block : model.blocks) {
    const auto& part = dynamic_cast<const TransformerXLPositions&>(*block->attention.positions);
    EXPECT_EQ(part.u.dtype(), ag::Dtype::f32);
    EXPECT_EQ(part.u.at({1, 0, 7}), 3.0);
    EXPECT_EQ(part.v.at({1, 0, 7}), xl->v.at({1, 0, 7}));
  }
  auto t5 = std::dynamic_pointer_cast<T5Encoding>(make_small("t5"));
  Decoder t5_model(small_decoder_config(), t5, rng);
  t5->table.copy_from(ag::full(t5->table.shape(), -2.0, ag::Dtype::f64));
  for (const auto& block : t5_model.blocks)
    EXPECT_EQ(dynamic_cast<const T5Positions&>(*block->attention.positions).table.at({5, 1}), -2.0);
}

TEST(Ch04Relative, BadShawOptionsAreErrors) {
  EXPECT_THROW(make_small("shaw", {{"max_distance", "-1"}}), ag::Error);
  EXPECT_THROW(make_small("shaw", {{"max_distance", "0"}}), ag::Error);
  EXPECT_THROW(make_small("shaw", {{"max_distance", "2.5"}}), ag::Error);
  EXPECT_THROW(make_small("shaw", {{"max_distance", "many"}}), ag::Error);
  EXPECT_THROW(make_small("xl", {{"max_distance", "4"}}), ag::Error);  // xl has no options
  try {
    shaw_clipped_index(3, 3, 0, -2);
    FAIL() << "expected an error";
  } catch (const ag::Error& e) {
    EXPECT_NE(std::string(e.what()).find("-2"), std::string::npos) << e.what();
  }
  EXPECT_THROW(shaw_clipped_index(3, 3, -1, 2), ag::Error);
}

TEST(Ch04Relative, ScoresAndValuesDependOnlyOnTheDistance) {
  // Queries q at positions 0 .. T-1 against keys k at 0 .. T-1, then the same queries at
  // s .. s+T-1 against s unrelated keys followed by k at s .. s+T-1: every hook's result on
  // the shared keys must be the same.
  ag::Rng rng(1);
  const std::int64_t T = 5, s = 7;
  const Tensor q = ag::randn({1, 2, T, 8}, rng, f64), k = ag::randn({1, 2, T, 8}, rng, f64);
  const Tensor shifted_keys = ag::concat({ag::randn({1, 2, s, 8}, rng, f64), k}, 2);
  const Tensor w = ag::softmax(ag::randn({1, 2, T, T}, rng, f64));
  const Tensor shifted_w = ag::concat({ag::zeros({1, 2, T, s}, f64), w}, 3);
  for (const char* name : kEncodings) {
    auto encoding = make_small(name, name == std::string("shaw")
                                         ? std::map<std::string, std::string>{{"max_distance", "3"}}
                                         : std::map<std::string, std::string>{});
    for (const auto& part : make_parts(*encoding)) {
      const Tensor base = hooked_scores(*part, q, k, 0);
      const Tensor moved = ag::slice(hooked_scores(*part, q, shifted_keys, s), 3, s, s + T);
      EXPECT_LT(max_abs_difference(base, moved), 1e-12) << name;
      const Tensor out = ag::zeros({1, 2, T, 8}, f64);
      EXPECT_LT(max_abs_difference(part->values(out, w, 0), part->values(out, shifted_w, s)), 1e-12)
          << name;
      // and the position terms are not trivially constant
      const Tensor plain = ag::mul(ag::matmul_transposed(q, k), 1.0 / std::sqrt(8.0));
      EXPECT_GT(max_abs_difference(base, plain), 1e-3) << name;
    }
  }
}

TEST(Ch04Relative, CachedDecodingMatchesTheFullPass) {
  for (const char* name : kEncodings) {
    auto encoding = make_small(name, name == std::string("shaw")
                                         ? std::map<std::string, std::string>{{"max_distance", "2"}}
                                         : std::map<std::string, std::string>{});
    ag::Rng rng(2);
    Decoder model(small_decoder_config(), encoding, rng);
    model.to(f64);
    for (std::size_t i = 0; i < model.blocks.size(); ++i)
      spread(*model.blocks[i]->attention.positions, 30 + i);
    const auto difference = cached_decoding_difference(model);
    EXPECT_LT(difference.one_by_one, 1e-12) << name;
    EXPECT_LT(difference.chunks, 1e-12) << name;
  }
}

TEST(Ch04Relative, OneBlockModelPassesGradcheckInFloat64) {
  register_ch04_encodings();
  for (const char* name : kEncodings) {
    EncodingSpec spec;
    spec.model = small_decoder_config();
    spec.options = name == std::string("shaw")
                       ? std::map<std::string, std::string>{{"max_distance", "1"}}
                       : std::map<std::string, std::string>{};
    ag::Rng rng(3);
    auto encoding = make_encoding(name, spec, rng);
    const auto result = gradcheck_one_block(encoding, rng);
    EXPECT_TRUE(result.passed) << name << ": " << result.report;
    EXPECT_GT(result.checks, 100) << name;
  }
}
