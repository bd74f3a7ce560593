// Chapter 4, T5: the bucket function on hand-worked values in both modes, the bias matrix,
// the hook, the gradients, and options that cannot make a bucket function.
#include <gtest/gtest.h>

#include "ag/gradcheck.hpp"
#include "chapters/04-relative/tests/ch04_test_helpers.hpp"

using namespace pe;
using namespace pe::ch04_test;
using ag::Tensor;

namespace {

void expect_buckets(const T5BucketOptions& options,
                    const std::vector<std::pair<std::int64_t, std::int64_t>>& rel_and_bucket) {
  for (auto [rel, bucket] : rel_and_bucket)
    EXPECT_EQ(t5_bucket(rel, options), bucket)
        << "relative position " << rel << ", buckets " << options.buckets << ", max_distance "
        << options.max_distance << (options.bidirectional ? ", bidirectional" : ", causal");
}

}  // namespace

// grades: task 4.3
TEST(Ch04T5, BucketsCausalDefault) {
  // 32 buckets, max_distance 128, n = max(-rel, 0), max_exact = 16:
  // n >= 16 -> 16 + floor(log(n/16) / log(8) * 16), at most 31
  expect_buckets({}, {
                         {0, 0},       // distance 0
                         {5, 0},       // a future key counts as distance 0
                         {-1, 1},      //
                         {-15, 15},    // the last exact bucket
                         {-16, 16},    // the first logarithmic one: log(1) = 0
                         {-18, 16},    // 16 + floor(log(1.125)/log(8)*16 = 0.906)
                         {-19, 17},    // 16 + floor(1.32)
                         {-32, 21},    // 16 + floor(16/3)
                         {-64, 26},    // 16 + floor(32/3)
                         {-127, 31},   // 16 + floor(15.94)
                         {-128, 31},   // 16 + 16 = 32, clamped to the last bucket
                         {-1000, 31},  // far beyond max_distance
                     });
}

// grades: task 4.3
TEST(Ch04T5, BucketsBidirectionalDefault) {
  // 16 buckets a side (keys after the query: 16 .. 31), max_exact = 8,
  // n >= 8 -> 8 + floor(log(n/8) / log(16) * 8), at most 15 on each side
  T5BucketOptions both;
  both.bidirectional = true;
  expect_buckets(both, {
                           {0, 0},
                           {1, 17},  // upper half: 16 + 1
                           {-1, 1},
                           {-7, 7},
                           {7, 23},
                           {-8, 8},      // first logarithmic bucket of the lower side
                           {8, 24},      // and of the upper side
                           {-15, 9},     // 8 + floor(log(1.875)/log(16)*8 = 1.81)
                           {-16, 10},    // 8 + log(2)/log(16)*8 = 8 + 2
                           {-32, 12},    // 8 + 4
                           {64, 30},     // 16 + 8 + 6
                           {-127, 15},   // 8 + floor(7.98)
                           {-128, 15},   // 8 + 8, clamped
                           {1000, 31},   //
                           {-1000, 15},  //
                       });
}

// grades: task 4.3
TEST(Ch04T5, BucketsOfASmallConfigurationWorkedByHand) {
  // Causal, 8 buckets, max_distance 20: max_exact = 4, so distances 0..3 are exact and
  // n >= 4 -> 4 + floor(log(n/4) / log(5) * 4):
  //   n = 5: log 1.25 / log 5 = 0.139, * 4 = 0.55 -> 4      n = 6: 0.252 * 4 = 1.01 -> 5
  //   n = 8: 0.431 * 4 = 1.72 -> 5                          n = 9: 0.504 * 4 = 2.02 -> 6
  //   n = 13: 0.732 * 4 = 2.93 -> 6                         n = 14: 0.778 * 4 = 3.11 -> 7
  //   n = 20: 4 + 4 = 8 -> clamped to 7
  expect_buckets({8, 20, false}, {{0, 0},
                                  {-1, 1},
                                  {-3, 3},
                                  {-4, 4},
                                  {-5, 4},
                                  {-6, 5},
                                  {-8, 5},
                                  {-9, 6},
                                  {-13, 6},
                                  {-14, 7},
                                  {-20, 7},
                                  {-1000, 7},
                                  {3, 0}});
  // Bidirectional, 8 buckets, max_distance 20: 4 a side, max_exact = 2,
  // n >= 2 -> 2 + floor(log(n/2) / log(10) * 2):
  //   n = 6: log 3 / log 10 * 2 = 0.95 -> 2      n = 7: log 3.5 / log 10 * 2 = 1.09 -> 3
  // keys after the query add 4.
  expect_buckets({8, 20, true}, {{0, 0},
                                 {1, 5},
                                 {2, 6},
                                 {6, 6},
                                 {7, 7},
                                 {1000, 7},
                                 {-1, 1},
                                 {-2, 2},
                                 {-6, 2},
                                 {-7, 3},
                                 {-1000, 3}});
}

// grades: task 4.3
TEST(Ch04T5, BucketMatrixAndBiasDependOnlyOnTheDistance) {
  const T5BucketOptions options{8, 20, true};
  const ag::Indices full = t5_bucket_matrix(12, 12, 0, options);
  for (std::int64_t i = 0; i + 3 < 12; ++i)
    for (std::int64_t j = 0; j + 3 < 12; ++j)
      EXPECT_EQ(full.values[i * 12 + j], full.values[(i + 3) * 12 + j + 3]);
  // an offset gives the rows of the full matrix
  const ag::Indices rows = t5_bucket_matrix(4, 12, 8, options);
  EXPECT_EQ(rows.values,
            std::vector<std::int64_t>(full.values.begin() + 8 * 12, full.values.end()));
  // bias[h, i, j] = table[bucket(i, j), h]
  ag::Rng rng(1);
  const Tensor table = ag::randn({8, 3}, rng, f64);
  const Tensor bias = t5_bias(table, full);
  ASSERT_EQ(bias.shape(), (ag::Shape{3, 12, 12}));
  for (std::int64_t h = 0; h < 3; ++h)
    for (std::int64_t i = 0; i < 12; ++i)
      for (std::int64_t j = 0; j < 12; ++j)
        EXPECT_EQ(bias.at({h, i, j}), table.at({full.values[i * 12 + j], h}));
}

TEST(Ch04T5, HookAddsTheSameBiasInEveryLayerAndBatchRow) {
  auto encoding = make_small("t5", {{"buckets", "8"}, {"max_distance", "20"}});
  auto& t5 = dynamic_cast<T5Encoding&>(*encoding);
  const auto parts = make_parts(t5);
  ag::Rng rng(2);
  const Tensor scores = ag::randn({3, 2, 4, 7}, rng, f64);
  const Tensor bias = t5_bias(t5.table, t5_bucket_matrix(4, 7, 3, t5.options()));
  for (const auto& part : parts) {
    EXPECT_TRUE(part->parameters().empty());  // the table is the encoding's, registered once
    const Tensor out = part->bias(scores, Tensor(), Tensor(), 3);
    for (std::int64_t b = 0; b < 3; ++b)
      EXPECT_LT(max_abs_difference(ag::reshape(ag::sub(ag::slice(out, 0, b, b + 1),
                                                       ag::slice(scores, 0, b, b + 1)),
                                               {2, 4, 7}),
                                   bias),
                1e-15);
  }
  const auto quantities = t5.inspect(5);
  ASSERT_EQ(quantities.size(), 2u);
  EXPECT_EQ(quantities[0].first, "buckets");
  EXPECT_EQ(quantities[0].second.shape(), (ag::Shape{5, 5}));
  EXPECT_EQ(quantities[0].second.at({4, 0}), 4.0);  // distance 4 is the first log bucket: 4
  EXPECT_EQ(quantities[1].first, "bias");
  EXPECT_EQ(quantities[1].second.shape(), (ag::Shape{2, 5, 5}));
}

TEST(Ch04T5, BiasPassesGradcheckInFloat64) {
  // the gradient reaches the encoding's table through the handle a layer's part holds
  auto encoding = make_small("t5", {{"buckets", "8"}, {"max_distance", "20"}});
  const auto part = make_parts(*encoding)[0];
  ag::Rng rng(3);
  const Tensor scores = ag::randn({2, 2, 3, 9}, rng, f64);
  std::vector<Tensor> inputs = encoding->parameters();
  inputs.push_back(scores);
  const auto result = ag::gradcheck(
      [&](const std::vector<Tensor>& in) { return part->bias(in.back(), Tensor(), Tensor(), 6); },
      inputs);
  EXPECT_TRUE(result.passed) << result.report;
}

TEST(Ch04T5, OptionsThatMakeNoBucketFunctionAreErrors) {
  EXPECT_THROW(check_t5_options({1, 128, false}), ag::Error);  // one bucket
  EXPECT_THROW(check_t5_options({7, 128, true}), ag::Error);   // odd, bidirectional
  EXPECT_THROW(check_t5_options({2, 128, true}), ag::Error);   // one bucket a side
  EXPECT_THROW(check_t5_options({32, 16, false}), ag::Error);  // max_distance <= max_exact
  EXPECT_THROW(check_t5_options({32, 8, true}), ag::Error);
  EXPECT_NO_THROW(check_t5_options({7, 128, false}));  // odd is fine when causal
  EXPECT_NO_THROW(check_t5_options({4, 3, true}));     // 2 a side, 1 exact
  try {
    check_t5_options({7, 128, true});
    FAIL() << "expected an error";
  } catch (const ag::Error& e) {
    EXPECT_NE(std::string(e.what()).find("got 7"), std::string::npos) << e.what();
  }
  EXPECT_THROW(make_small("t5", {{"buckets", "1"}}), ag::Error);
  EXPECT_THROW(make_small("t5", {{"buckets", "31"}, {"bidirectional", "1"}}), ag::Error);
  EXPECT_THROW(make_small("t5", {{"bidirectional", "2"}}), ag::Error);
  EXPECT_THROW(make_small("t5", {{"bidirectional", "yes"}}), ag::Error);
  for (const char* yes : {"true", "1"}) {  // a yes/no option: true/false or 1/0
    const auto t5 = std::dynamic_pointer_cast<T5Encoding>(
        make_small("t5", {{"buckets", "8"}, {"bidirectional", yes}}));
    ASSERT_TRUE(t5) << yes;
    EXPECT_TRUE(t5->options().bidirectional) << yes;
  }
  EXPECT_THROW(make_small("t5", {{"buckets", "16.5"}}), ag::Error);
  EXPECT_THROW(make_small("t5", {{"max_distance", "-4"}}), ag::Error);
  EXPECT_THROW(make_small("t5", {{"bucket", "8"}}), ag::Error);  // unknown option
}
