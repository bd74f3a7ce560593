// Chapter 1: attention cannot see order; the causal mask can; the cache changes nothing.
#include <gtest/gtest.h>

#include <cmath>

#include "ag/gradcheck.hpp"
#include "chapters/01-attention/decoder.hpp"
#include "chapters/01-attention/encoding_registry.hpp"
#include "chapters/01-attention/permutation.hpp"
#include "chapters/01-attention/tests/model_check.hpp"

using namespace pe;
using ag::Tensor;

namespace {

// What the hooks of a spy encoding and of all its parts were given.
struct SpyLog {
  std::vector<std::int64_t> embed_offsets, rotate_offsets, bias_keys, values_offsets;
  int parts_made = 0;
};

// Records what the attention hooks were given, and adds nothing. Its one parameter shows
// where a part's parameters are registered.
struct SpyPositions : AttentionPositions {
  explicit SpyPositions(std::shared_ptr<SpyLog> log_) : log(std::move(log_)) {
    register_parameter("weight", weight);
  }
  std::pair<Tensor, Tensor> rotate(const Tensor& q, const Tensor& k,
                                   const Positions& at) const override {
    log->rotate_offsets.push_back(at.first());
    return {q, k};
  }
  Tensor bias(const Tensor& scores, const Tensor&, const Tensor& k,
              const Positions&) const override {
    log->bias_keys.push_back(k.size(2));
    return scores;
  }
  Tensor values(const Tensor& out, const Tensor&, const Positions& at) const override {
    log->values_offsets.push_back(at.first());
    return out;
  }
  std::shared_ptr<SpyLog> log;
  Tensor weight = ag::zeros({1});
};

struct SpyEncoding : PositionalEncoding {
  std::shared_ptr<SpyLog> log = std::make_shared<SpyLog>();
  std::string name() const override { return "spy"; }
  Tensor embed(const Tensor& x, const Positions& at) const override {
    log->embed_offsets.push_back(at.first());
    return x;
  }
  std::shared_ptr<AttentionPositions> make_attention_part(ag::Rng&) const override {
    ++log->parts_made;
    return std::make_shared<SpyPositions>(log);
  }
};

// Records which layer of how many each part was made for.
struct LayerSpyEncoding : PositionalEncoding {
  mutable std::vector<std::pair<std::int64_t, std::int64_t>> asked;  // (layer, layers)
  std::string name() const override { return "layer-spy"; }
  std::shared_ptr<AttentionPositions> make_layer_part(ag::Rng& rng, std::int64_t layer,
                                                      std::int64_t layers) const override {
    asked.emplace_back(layer, layers);
    return make_attention_part(rng);
  }
};

// Adds 0.5 (j - i) to the score of query i and key j: a known bias, to see where attention
// adds it.
struct TiltPositions : AttentionPositions {
  Tensor bias(const Tensor& scores, const Tensor&, const Tensor&,
              const Positions& at) const override {
    const std::int64_t queries = scores.size(2), keys = scores.size(3);
    std::vector<double> tilt;
    for (std::int64_t i = 0; i < queries; ++i)
      for (std::int64_t j = 0; j < keys; ++j)
        tilt.push_back(0.5 * double(at.keys(keys).at(j) - at.at(i)));
    return ag::add(scores, ag::from_vector(tilt, {queries, keys}, scores.dtype()));
  }
};

}  // namespace

// grades: task 1.1
TEST(Ch01Attention, ReorderingPutsRowOrderTOfTheInputAtPositionT) {
  // x [2, 4, 2], x[b, t] = (100 b + 10 t, 100 b + 10 t + 1): position t of the result is
  // position order[t] of the input, in every batch row
  std::vector<double> values;
  for (int b = 0; b < 2; ++b)
    for (int t = 0; t < 4; ++t)
      values.insert(values.end(), {100.0 * b + 10 * t, 100.0 * b + 10 * t + 1});
  const Tensor x = ag::from_vector(values, {2, 4, 2}, ag::Dtype::f64);
  const std::vector<std::int64_t> order{2, 0, 3, 1};
  const Tensor y = reorder_positions(x, order);
  ASSERT_EQ(y.shape(), (ag::Shape{2, 4, 2}));
  for (std::int64_t b = 0; b < 2; ++b)
    for (std::int64_t t = 0; t < 4; ++t)
      for (std::int64_t c = 0; c < 2; ++c)
        EXPECT_EQ(y.at({b, t, c}), x.at({b, order[t], c})) << "batch " << b << ", position " << t;
}

// grades: task 1.2
TEST(Ch01Attention, SplitHeadsGivesHeadHItsOwnColumnsAtEveryPosition) {
  // x [B=2, T=3, C=6], x[b, t, c] = 100 b + 10 t + c; 3 heads of D = 2: head h holds the
  // columns 2h and 2h + 1 of every position, [B, H, T, D]
  std::vector<double> values;
  for (int b = 0; b < 2; ++b)
    for (int t = 0; t < 3; ++t)
      for (int c = 0; c < 6; ++c) values.push_back(100.0 * b + 10 * t + c);
  const Tensor x = ag::from_vector(values, {2, 3, 6}, ag::Dtype::f64);
  const Tensor heads = split_heads(x, 3);
  ASSERT_EQ(heads.shape(), (ag::Shape{2, 3, 3, 2}));
  for (std::int64_t b = 0; b < 2; ++b)
    for (std::int64_t h = 0; h < 3; ++h)
      for (std::int64_t t = 0; t < 3; ++t)
        for (std::int64_t d = 0; d < 2; ++d)
          EXPECT_EQ(heads.at({b, h, t, d}), 100.0 * b + 10 * t + 2 * h + d)
              << "batch " << b << ", head " << h << ", position " << t << ", column " << d;
  // merging puts every value back where it was
  const Tensor merged = merge_heads(heads);
  ASSERT_EQ(merged.shape(), x.shape());
  EXPECT_EQ(merged.to_vector(), values);
}

// grades: task 1.3
TEST(Ch01Attention, CausalMaskHidesExactlyTheKeysAfterEachQuery) {
  // 1 marks a key that the query must not see: key j after query i (j > i)
  EXPECT_EQ(causal_mask(3, 3, 0, ag::Dtype::f64).to_vector(), (std::vector<double>{0, 1, 1,  //
                                                                                   0, 0, 1,  //
                                                                                   0, 0, 0}));
  // queries at positions 2 and 3 (offset 2: the first two are in a cache) against keys 0..3
  const Tensor late = causal_mask(2, 4, 2, ag::Dtype::f64);
  ASSERT_EQ(late.shape(), (ag::Shape{2, 4}));
  EXPECT_EQ(late.to_vector(), (std::vector<double>{0, 0, 0, 1,  //
                                                   0, 0, 0, 0}));
  // one query at position 5, decoding with a cache: it sees every key
  EXPECT_EQ(causal_mask(1, 6, 5, ag::Dtype::f64).to_vector(), std::vector<double>(6, 0.0));
}

// Task 1.4 is the first after which attention runs: the tests of what the mask and the
// heads do inside a layer grade it (the tests of 1.2 and 1.3 may not wait for it).
// grades: task 1.4
TEST(Ch01Attention, WeightsAreTheSoftmaxOfTheScaledScores) {
  // One layer's weights against a computation by hand: softmax_j(q_i . k_j / sqrt(D) + b_ij),
  // the future masked, with the encoding's bias b_ij = 0.5 (j - i) added to the scaled score.
  // D = 4, so a score is scaled by 1/2.
  ag::Rng rng(13);
  SelfAttention attention(8, 2, rng, /*causal=*/true, ag::Dtype::f64,
                          std::make_shared<TiltPositions>());
  attention.capture_weights = true;
  const Tensor x = ag::randn({1, 3, 8}, rng, ag::Dtype::f64);
  attention.forward(x);
  const Tensor q = split_heads(attention.query.forward(x), 2);
  const Tensor k = split_heads(attention.key.forward(x), 2);
  for (std::int64_t h = 0; h < 2; ++h)
    for (std::int64_t i = 0; i < 3; ++i) {
      std::vector<double> e(static_cast<std::size_t>(i + 1));
      double total = 0;
      for (std::int64_t j = 0; j <= i; ++j) {
        double score = 0;
        for (std::int64_t d = 0; d < 4; ++d) score += q.at({0, h, i, d}) * k.at({0, h, j, d});
        e[static_cast<std::size_t>(j)] = std::exp(score / 2.0 + 0.5 * double(j - i));
        total += e[static_cast<std::size_t>(j)];
      }
      for (std::int64_t j = 0; j < 3; ++j) {
        const double expected = j <= i ? e[static_cast<std::size_t>(j)] / total : 0.0;
        EXPECT_NEAR(attention.last_weights.at({0, h, i, j}), expected, 1e-12)
            << "head " << h << ", query " << i << ", key " << j;
      }
    }
}

// grades: task 1.4
TEST(Ch01Attention, WithoutMaskPermutingTheInputPermutesTheOutput) {
  ag::Rng rng(1);
  SelfAttention attention(16, 4, rng, /*causal=*/false);
  Tensor x = ag::randn({1, 6, 16}, rng);
  const std::vector<std::int64_t> order{3, 0, 5, 1, 4, 2};
  Tensor permuted_then_attended = attention.forward(reorder_positions(x, order));
  Tensor attended_then_permuted = reorder_positions(attention.forward(x), order);
  EXPECT_LT(max_abs_difference(permuted_then_attended, attended_then_permuted), 1e-5);
}

// grades: task 1.4
TEST(Ch01Attention, WithTheCausalMaskOrderMatters) {
  ag::Rng rng(2);
  SelfAttention attention(16, 4, rng, /*causal=*/true);
  Tensor x = ag::randn({1, 6, 16}, rng);
  const std::vector<std::int64_t> order{3, 0, 5, 1, 4, 2};
  Tensor a = attention.forward(reorder_positions(x, order));
  Tensor b = reorder_positions(attention.forward(x), order);
  EXPECT_GT(max_abs_difference(a, b), 1e-2);
}

// grades: task 1.4
TEST(Ch01Attention, CausalOutputIgnoresTheFuture) {
  ag::Rng rng(3);
  Decoder model(small_decoder_config(), std::make_shared<NoEncoding>(), rng);
  Tensor a = model.forward({{1, 2, 3, 4, 5}, {1, 5}});
  Tensor b = model.forward({{1, 2, 3, 6, 0}, {1, 5}});  // differs from position 3 on
  EXPECT_LT(max_abs_difference(ag::slice(a, 1, 0, 3), ag::slice(b, 1, 0, 3)), 1e-6);
  EXPECT_GT(max_abs_difference(ag::slice(a, 1, 3, 5), ag::slice(b, 1, 3, 5)), 1e-4);
}

// grades: task 1.4
TEST(Ch01Attention, CachedDecodingMatchesTheFullPass) {
  ag::Rng rng(4);
  auto spy = std::make_shared<SpyEncoding>();
  Decoder model(small_decoder_config(), spy, rng);
  const ag::Indices ids{{1, 4, 2, 6, 0, 3, 5, 1, 2, 3, 4, 0}, {2, 6}};
  Tensor full = model.forward(ids);  // [2, 6, V]
  spy->log->embed_offsets.clear();
  spy->log->rotate_offsets.clear();
  spy->log->bias_keys.clear();
  spy->log->values_offsets.clear();
  KVCache cache;
  ag::NoGradGuard no_grad;
  for (std::int64_t t = 0; t < 6; ++t) {
    ag::Indices step{{ids.values[t], ids.values[6 + t]}, {2, 1}};
    Tensor logits = model.forward(step, t, &cache);
    EXPECT_LT(max_abs_difference(logits, ag::slice(full, 1, t, t + 1)), 1e-5) << "position " << t;
  }
  EXPECT_EQ(cache.length(), 6);
  EXPECT_EQ(spy->log->embed_offsets, (std::vector<std::int64_t>{0, 1, 2, 3, 4, 5}));
  // two layers, so each offset reaches the rotate hook twice
  EXPECT_EQ(spy->log->rotate_offsets,
            (std::vector<std::int64_t>{0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5}));
  // and bias sees every key so far, the cached ones included
  EXPECT_EQ(spy->log->bias_keys, (std::vector<std::int64_t>{1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6}));
  // and the values hook gets each query's offset
  EXPECT_EQ(spy->log->values_offsets,
            (std::vector<std::int64_t>{0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5}));
}

TEST(Ch01Attention, EachLayerOwnsThePartTheEncodingMadeForIt) {
  ag::Rng rng(12);
  auto spy = std::make_shared<SpyEncoding>();
  Decoder model(small_decoder_config(), spy, rng);
  EXPECT_EQ(spy->log->parts_made, 2);
  EXPECT_NE(model.blocks[0]->attention.positions, model.blocks[1]->attention.positions);
  EXPECT_TRUE(std::dynamic_pointer_cast<SpyPositions>(model.blocks[1]->attention.positions));
  std::vector<std::string> names;
  for (const auto& [name, tensor] : model.named_parameters())
    if (name.find("positions") != std::string::npos) names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{"blocks.0.attention.positions.weight",
                                             "blocks.1.attention.positions.weight"}));
  // without an encoding's part, attention has the part that adds nothing
  SelfAttention plain(8, 2, rng);
  ASSERT_TRUE(plain.positions);
  EXPECT_TRUE(plain.positions->parameters().empty());
}

TEST(Ch01Attention, TheDecoderAsksForEachLayersPartByItsIndex) {
  ag::Rng rng(12);
  auto spy = std::make_shared<LayerSpyEncoding>();
  DecoderConfig config = small_decoder_config();
  config.layers = 4;
  Decoder model(config, spy, rng);
  EXPECT_EQ(spy->asked,
            (std::vector<std::pair<std::int64_t, std::int64_t>>{{0, 4}, {1, 4}, {2, 4}, {3, 4}}));
  // and an encoding that does not choose by layer gets make_attention_part for every layer
  auto same = std::make_shared<SpyEncoding>();
  Decoder plain(config, same, rng);
  EXPECT_EQ(same->log->parts_made, 4);
}

// grades: task 1.4
TEST(Ch01Attention, CacheInChunksMatchesTheFullPass) {
  ag::Rng rng(5);
  Decoder model(small_decoder_config(), std::make_shared<NoEncoding>(), rng);
  const ag::Indices ids{{1, 4, 2, 6, 0, 3, 5}, {1, 7}};
  Tensor full = model.forward(ids);
  KVCache cache;
  Tensor first = model.forward({{1, 4, 2, 6}, {1, 4}}, 0, &cache);
  Tensor rest = model.forward({{0, 3, 5}, {1, 3}}, 4, &cache);
  EXPECT_LT(max_abs_difference(ag::concat({first, rest}, 1), full), 1e-5);
}

TEST(Ch01Attention, WrongCacheOffsetIsAnError) {
  ag::Rng rng(6);
  Decoder model(small_decoder_config(), std::make_shared<NoEncoding>(), rng);
  KVCache cache;
  model.forward({{1, 2}, {1, 2}}, 0, &cache);
  EXPECT_THROW(model.forward({{3}, {1, 1}}, 5, &cache), ag::Error);
}

TEST(Ch01Attention, BadConfigurationsAreErrors) {
  ag::Rng rng(7);
  EXPECT_THROW(SelfAttention(10, 3, rng), ag::Error);
  Decoder model(small_decoder_config(), std::make_shared<NoEncoding>(), rng);
  EXPECT_THROW(model.forward({{1, 2, 3}, {3}}), ag::Error);     // ids must be [B, T]
  EXPECT_THROW(model.forward({{1, 2, 9}, {1, 3}}), ag::Error);  // id outside the vocabulary
  DecoderConfig zero = small_decoder_config();
  zero.layers = 0;
  EXPECT_THROW(Decoder(zero, std::make_shared<NoEncoding>(), rng), ag::Error);
}

// grades: task 1.4
TEST(Ch01Attention, AttentionWeightsAreCapturedAndCausal) {
  ag::Rng rng(8);
  Decoder model(small_decoder_config(), std::make_shared<NoEncoding>(), rng);
  model.capture_attention(true);
  model.forward({{1, 2, 3, 4}, {1, 4}});
  const auto weights = model.attention_weights();
  ASSERT_EQ(weights.size(), 2u);
  EXPECT_EQ(weights[0].shape(), (ag::Shape{1, 2, 4, 4}));
  for (std::int64_t h = 0; h < 2; ++h)
    for (std::int64_t i = 0; i < 4; ++i) {
      double row = 0;
      for (std::int64_t j = 0; j < 4; ++j) {
        if (j > i) {
          EXPECT_EQ(weights[0].at({0, h, i, j}), 0.0);
        }
        row += weights[0].at({0, h, i, j});
      }
      EXPECT_NEAR(row, 1.0, 1e-6);
    }
}

// grades: task 1.4
TEST(Ch01Attention, OneBlockModelPassesGradcheckInFloat64) {
  ag::Rng rng(9);
  const auto result = gradcheck_one_block(std::make_shared<NoEncoding>(), rng);
  EXPECT_TRUE(result.passed) << result.report;
  EXPECT_GT(result.checks, 100);
}

// grades: task 1.4
TEST(Ch01Attention, AttentionAlonePassesGradcheckWithRespectToItsInput) {
  ag::Rng rng(10);
  SelfAttention attention(8, 2, rng);
  attention.to(ag::Dtype::f64);
  Tensor x = ag::randn({2, 4, 8}, rng, ag::Dtype::f64);
  const auto result =
      ag::gradcheck([&](const std::vector<Tensor>& in) { return attention.forward(in[0]); }, {x});
  EXPECT_TRUE(result.passed) << result.report;
}

TEST(Ch01Registry, NoneIsRegisteredAndUnknownNamesAreErrors) {
  ag::Rng rng(11);
  EncodingSpec spec;
  EXPECT_EQ(make_encoding("none", spec, rng)->name(), "none");
  try {
    make_encoding("nonsense", spec, rng);
    FAIL();
  } catch (const ag::Error& e) {
    EXPECT_NE(std::string(e.what()).find("none"), std::string::npos) << "lists known names";
  }
  spec.options["base"] = "10000";
  EXPECT_THROW(make_encoding("none", spec, rng), ag::Error);
  EXPECT_THROW(register_encoding({"none", "01", "again", {}, nullptr}), ag::Error);
}

// A register function called twice (a program's registry and its tests both call it) changes
// nothing; another definition under a name already taken is still an error.
TEST(Ch01Registry, RegisteringTheSameEntryAgainIsANoOp) {
  auto register_twin = [] {
    register_encoding(
        {"ch01-test-twin",
         "01",
         "the same entry, registered by one call site",
         {"x"},
         [](const EncodingSpec&, ag::Rng&) { return std::make_shared<NoEncoding>(); }});
  };
  register_twin();
  const std::size_t count = registered_encodings().size();
  EXPECT_NO_THROW(register_twin());
  EXPECT_EQ(registered_encodings().size(), count);
  // same name and text, but another factory (another lambda)
  EXPECT_THROW(register_encoding(
                   {"ch01-test-twin",
                    "01",
                    "the same entry, registered by one call site",
                    {"x"},
                    [](const EncodingSpec&, ag::Rng&) { return std::make_shared<NoEncoding>(); }}),
               ag::Error);
  EXPECT_EQ(registered_encodings().size(), count);
}

TEST(Ch01Registry, IntegerAndBooleanOptionsReadWholeValuesOnly) {
  EncodingSpec spec;
  spec.options = {{"rows", "16"}, {"yes", "true"}, {"one", "1"}, {"no", "false"}, {"zero", "0"}};
  EXPECT_EQ(integer_option(spec, "demo", "rows", 4, 1, 100), 16);
  EXPECT_EQ(integer_option(spec, "demo", "absent", 4, 1, 100), 4);
  EXPECT_TRUE(bool_option(spec, "demo", "yes", false));
  EXPECT_TRUE(bool_option(spec, "demo", "one", false));
  EXPECT_FALSE(bool_option(spec, "demo", "no", true));
  EXPECT_FALSE(bool_option(spec, "demo", "zero", true));
  EXPECT_TRUE(bool_option(spec, "demo", "absent", true));
  for (const char* bad : {"16.5", "12abc", "", " 3", "0", "101", "99999999999999999999"}) {
    spec.options["rows"] = bad;
    try {
      integer_option(spec, "demo", "rows", 4, 1, 100);
      ADD_FAILURE() << "'" << bad << "' was accepted";
    } catch (const ag::Error& e) {  // names the encoding, the option and the value
      const std::string message = e.what();
      EXPECT_NE(message.find("demo"), std::string::npos) << message;
      EXPECT_NE(message.find("rows"), std::string::npos) << message;
      EXPECT_NE(message.find("'" + std::string(bad) + "'"), std::string::npos) << message;
    }
  }
  for (const char* bad : {"yes", "2", "True", ""}) {
    spec.options["yes"] = bad;
    EXPECT_THROW(bool_option(spec, "demo", "yes", false), ag::Error) << bad;
  }
}

// Randomized positions (Ruoss et al., 2023): T distinct positions from 0 .. L_max-1, sorted.
TEST(Ch01Positions, RandomPositionsAreSortedDistinctAndInRange) {
  ag::Rng rng(7);
  for (const std::int64_t max_positions : {1, 5, 16, 2048})
    for (const std::int64_t count : {1, 2, 5, 16, 40})
      for (int draw = 0; draw < 200; ++draw) {
        if (count > max_positions) {
          EXPECT_THROW(random_positions(count, max_positions, rng), ag::Error);
          continue;
        }
        const Positions p = random_positions(count, max_positions, rng);
        ASSERT_FALSE(p.is_contiguous());
        const std::vector<std::int64_t> ids = p.ids(count);
        ASSERT_EQ(std::int64_t(ids.size()), count);
        for (std::int64_t i = 0; i < count; ++i) {
          EXPECT_GE(ids[i], 0);
          EXPECT_LT(ids[i], max_positions);
          if (i > 0) {
            EXPECT_LT(ids[i - 1], ids[i]) << "sorted and distinct";
          }
        }
      }
  // T == L_max leaves no choice: 0 .. L_max-1
  const Positions all = random_positions(6, 6, rng);
  EXPECT_EQ(all.ids(6), (std::vector<std::int64_t>{0, 1, 2, 3, 4, 5}));
  // every position is drawn sometimes: 3 of 8, 4000 times, each about 1500 times
  std::vector<int> seen(8, 0);
  for (int draw = 0; draw < 4000; ++draw)
    for (const auto id : random_positions(3, 8, rng).ids(3)) ++seen[id];
  for (const int n : seen) EXPECT_NEAR(n, 1500, 200);
}

TEST(Ch01Positions, ContiguousAndSampledPositionsAndTheirKeys) {
  const Positions offset = 3;
  EXPECT_TRUE(offset.is_contiguous());
  EXPECT_EQ(offset.ids(2), (std::vector<std::int64_t>{3, 4}));
  EXPECT_EQ(offset.end(2), 5);
  EXPECT_EQ(offset.keys(5), Positions(0));  // a cache holds keys from position 0
  const Positions sampled(std::vector<std::int64_t>{2, 7, 9});
  EXPECT_EQ(sampled.at(1), 7);
  EXPECT_EQ(sampled.end(3), 10);
  EXPECT_EQ(sampled.keys(3), sampled);
  EXPECT_THROW(sampled.keys(4), ag::Error);              // sampled queries have no cache
  EXPECT_THROW(sampled.check_count(2, "t"), ag::Error);  // one id per token
  auto message = [](std::vector<std::int64_t> ids) {
    try {
      Positions p(std::move(ids));
    } catch (const ag::Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message({3, 1}).find("sorted and distinct, got 3 then 1"), std::string::npos);
  EXPECT_NE(message({1, 1}).find("sorted and distinct, got 1 then 1"), std::string::npos);
  EXPECT_NE(message({-2, 1}).find("must not be negative, got -2"), std::string::npos);
  EXPECT_NE(message({}).find("at least one"), std::string::npos);
  EXPECT_THROW(Positions(std::int64_t{-1}), ag::Error);
}

// At sampled positions the mask still hides exactly the later tokens.
TEST(Ch01Positions, CausalMaskComparesPositions) {
  const Tensor sampled =
      causal_mask(3, 3, Positions(std::vector<std::int64_t>{4, 9, 30}), ag::Dtype::f64);
  EXPECT_EQ(sampled.to_vector(), causal_mask(3, 3, 0, ag::Dtype::f64).to_vector());
  EXPECT_EQ(causal_mask(2, 4, 2, ag::Dtype::f64).to_vector(),
            (std::vector<double>{0, 0, 0, 1, 0, 0, 0, 0}));
}

// A window of 2: query i sees keys i - 1 and i (and, before causal_mask, every later key).
TEST(Ch01Positions, SpanMaskHidesTheKeysOutsideTheWindow) {
  const AttentionSpan window{2, 0};
  EXPECT_EQ(span_mask(4, 4, 0, window, ag::Dtype::f64).to_vector(),
            (std::vector<double>{0, 0, 0, 0,  //
                                 0, 0, 0, 0,  //
                                 1, 0, 0, 0,  //
                                 1, 1, 0, 0}));
  // queries at 3 and 4 (offset 3, a cache of three) against keys 0 .. 4: the last two rows of
  // the full pass's mask
  EXPECT_EQ(span_mask(2, 5, 3, window, ag::Dtype::f64).to_vector(),
            (std::vector<double>{1, 1, 0, 0, 0,  //
                                 1, 1, 1, 0, 0}));
  // sampled positions 1, 2, 5, 6: distances are differences of ids, not of indices
  EXPECT_EQ(
      span_mask(4, 4, Positions(std::vector<std::int64_t>{1, 2, 5, 6}), window, ag::Dtype::f64)
          .to_vector(),
      (std::vector<double>{0, 0, 0, 0,  //
                           0, 0, 0, 0,  //
                           1, 1, 0, 0,  //
                           1, 1, 0, 0}));
  // a window of 1 leaves each query itself only
  const Tensor self = span_mask(3, 3, 0, {1, 0}, ag::Dtype::f64);
  EXPECT_EQ(self.to_vector(), (std::vector<double>{0, 0, 0, 1, 0, 0, 1, 1, 0}));
}

// Chunks of 2: positions 0-1, 2-3, 4-5 attend within their own chunk.
TEST(Ch01Positions, SpanMaskHidesTheKeysInOtherChunks) {
  const AttentionSpan chunks{0, 2};
  EXPECT_EQ(span_mask(5, 5, 0, chunks, ag::Dtype::f64).to_vector(),
            (std::vector<double>{0, 0, 1, 1, 1,  //
                                 0, 0, 1, 1, 1,  //
                                 1, 1, 0, 0, 1,  //
                                 1, 1, 0, 0, 1,  //
                                 1, 1, 1, 1, 0}));
  // one query at 3 with a cache: it sees key 2 of its chunk only (key 3 is itself)
  EXPECT_EQ(span_mask(1, 4, 3, chunks, ag::Dtype::f64).to_vector(),
            (std::vector<double>{1, 1, 0, 0}));
  // sampled positions 1, 2, 3, 7: chunks 0, 1, 1, 3
  EXPECT_EQ(
      span_mask(4, 4, Positions(std::vector<std::int64_t>{1, 2, 3, 7}), chunks, ag::Dtype::f64)
          .to_vector(),
      (std::vector<double>{0, 1, 1, 1,  //
                           1, 0, 0, 1,  //
                           1, 0, 0, 1,  //
                           1, 1, 1, 0}));
  // a window and chunks together hide what either hides: window 2 in chunks of 4
  EXPECT_EQ(span_mask(1, 8, 7, {2, 4}, ag::Dtype::f64).to_vector(),
            (std::vector<double>{1, 1, 1, 1, 1, 1, 0, 0}));
  EXPECT_EQ(span_mask(1, 6, 5, {3, 4}, ag::Dtype::f64).to_vector(),
            (std::vector<double>{1, 1, 1, 1, 0, 0}));
  // no span hides nothing; a negative one is refused
  EXPECT_EQ(span_mask(2, 2, 0, {}, ag::Dtype::f64).to_vector(), std::vector<double>(4, 0.0));
  EXPECT_THROW(span_mask(2, 2, 0, {-1, 0}, ag::Dtype::f64), ag::Error);
  EXPECT_THROW(span_mask(2, 2, 0, {0, -2}, ag::Dtype::f64), ag::Error);
}

TEST(Ch01Positions, SampledPositionsAndACacheAreRefused) {
  ag::Rng rng(3);
  Decoder model(small_decoder_config(), std::make_shared<NoEncoding>(), rng);
  const ag::Indices ids{{1, 2, 3}, {1, 3}};
  KVCache cache;
  try {
    model.forward(ids, Positions(std::vector<std::int64_t>{0, 1, 2}), &cache);
    FAIL() << "no error";
  } catch (const ag::Error& e) {
    EXPECT_NE(std::string(e.what()).find("cache needs contiguous positions"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(model.forward(ids, Positions(std::vector<std::int64_t>{0, 1})), ag::Error);
  EXPECT_NO_THROW(model.forward(ids, Positions(std::vector<std::int64_t>{0, 5, 6})));
}

// Ruoss et al.'s evaluation convention: positions drawn as in training, from a fixed seed.
TEST(Ch01Positions, EvaluationPositionsAreFixedAndRefusePastLMax) {
  ag::Rng a(kEvaluationPositionsSeed), b(kEvaluationPositionsSeed);
  EXPECT_EQ(evaluation_positions(10, 64, a), evaluation_positions(10, 64, b));
  EXPECT_FALSE(evaluation_positions(10, 64, a).is_contiguous());
  EXPECT_EQ(evaluation_positions(100, 0, a), Positions(0));  // not trained so: 0 .. T-1
  try {
    evaluation_positions(65, 64, a);
    FAIL() << "no error";
  } catch (const ag::Error& e) {
    EXPECT_NE(std::string(e.what()).find("length 65 is longer than L_max = 64"), std::string::npos)
        << e.what();
  }
}
