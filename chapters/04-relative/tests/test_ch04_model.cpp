// Chapter 4, all three encodings in a model: registration and options, scores that depend
// only on j - i, decoding with a cache, and the one-block gradient check.
#include <gtest/gtest.h>

#include "ag/gradcheck.hpp"
#include "ch04_test_helpers.hpp"
#include "model_check.hpp"

using namespace pe;
using namespace pe::ch04_test;
using ag::Tensor;

namespace {

const char* const kEncodings[] = {"shaw", "xl", "t5"};

}  // namespace

TEST(Ch04Relative, RegisteredWithTheirOptions) {
  register_ch04_encodings();
  for (const auto& [name, options] : std::vector<std::pair<std::string, std::vector<std::string>>>{
           {"shaw", {"max_distance"}},
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
  EXPECT_EQ(shaw->max_distance(), 16);       // the default
  EXPECT_EQ(shaw->parameters().size(), 4u);  // a^K and a^V for each of 2 layers
  EXPECT_EQ(shaw->key_tables[0].shape(), (ag::Shape{33, 8}));
  auto xl = std::dynamic_pointer_cast<TransformerXLEncoding>(make_small("xl"));
  ASSERT_TRUE(xl);
  EXPECT_EQ(xl->parameters().size(), 4u);  // u, v, and W_R for each of 2 layers
  EXPECT_EQ(xl->projection[1].shape(), (ag::Shape{16, 16}));
  auto t5 = std::dynamic_pointer_cast<T5Encoding>(make_small("t5"));
  ASSERT_TRUE(t5);
  EXPECT_EQ(t5->table.shape(), (ag::Shape{32, 2}));  // one table for all layers
  EXPECT_EQ(t5->options().max_distance, 128);
  EXPECT_FALSE(t5->options().bidirectional);
  const auto shaw_inspect = shaw->inspect(4);
  ASSERT_EQ(shaw_inspect.front().first, "index");
  EXPECT_EQ(shaw_inspect.front().second.at({3, 0}), 13.0);  // clip(0 - 3) + 16
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
    for (int layer : {0, 1}) {
      const Tensor base = hooked_scores(*encoding, q, k, 0, layer);
      const Tensor moved =
          ag::slice(hooked_scores(*encoding, q, shifted_keys, s, layer), 3, s, s + T);
      EXPECT_LT(max_abs_difference(base, moved), 1e-12) << name << ", layer " << layer;
      const Tensor out = ag::zeros({1, 2, T, 8}, f64);
      EXPECT_LT(max_abs_difference(encoding->values(out, w, 0, layer),
                                   encoding->values(out, shifted_w, s, layer)),
                1e-12)
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
    Decoder model(small_config(), encoding, rng);
    model.to(f64);
    const auto difference = cached_decoding_difference(model);
    EXPECT_LT(difference.one_by_one, 1e-12) << name;
    EXPECT_LT(difference.chunks, 1e-12) << name;
  }
}

TEST(Ch04Relative, OneBlockModelPassesGradcheckInFloat64) {
  register_ch04_encodings();
  for (const char* name : kEncodings) {
    EncodingSpec spec;
    spec.model = tiny_decoder_config();
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
