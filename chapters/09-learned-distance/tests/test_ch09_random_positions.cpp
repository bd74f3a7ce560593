// Randomized positions (Ruoss et al., 2023) for every encoding of the book: what each hook
// gives at sampled positions is what it gives at contiguous ones, read at those positions;
// gradients at sampled positions; and the lab's training option end to end.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cctype>
#include <cmath>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ag/gradcheck.hpp"
#include "ag/random.hpp"
#include "chapters/01-attention/encoding_registry.hpp"
#include "chapters/01-attention/permutation.hpp"
#include "chapters/01-attention/tests/model_check.hpp"
#include "lab/chapter_registry.hpp"
#include "lab/trainer.hpp"

using namespace pe;
using ag::Tensor;

namespace {

constexpr ag::Dtype f64 = ag::Dtype::f64;
// Five tokens at sampled positions of a sequence of L = 12 (the last one is 11, so that a
// rule that depends on the length, dynamic NTK, sees the same length both ways).
const std::vector<std::int64_t> kIds{1, 4, 5, 9, 11};
constexpr std::int64_t kFull = 12, kT = 5;

// x's entries at `ids` along `axis`.
Tensor take(const Tensor& x, std::int64_t axis, const std::vector<std::int64_t>& ids) {
  std::vector<Tensor> rows;
  for (const auto i : ids) rows.push_back(ag::slice(x, axis, i, i + 1));
  return ag::concat(rows, axis);
}

// [B, H, L, L] zeros but at [ids, ids], where it holds small [B, H, T, T].
Tensor spread(const Tensor& small, std::int64_t L, const std::vector<std::int64_t>& ids) {
  const std::int64_t B = small.size(0), H = small.size(1), T = small.size(2);
  const std::vector<double> values = small.to_vector();
  std::vector<double> full(static_cast<std::size_t>(B * H * L * L), 0.0);
  for (std::int64_t bh = 0; bh < B * H; ++bh)
    for (std::int64_t i = 0; i < T; ++i)
      for (std::int64_t j = 0; j < T; ++j)
        full[(bh * L + ids[i]) * L + ids[j]] = values[(bh * T + i) * T + j];
  return ag::from_vector(full, {B, H, L, L}, small.dtype());
}

class RandomPositions : public ::testing::TestWithParam<std::string> {
 protected:
  static void SetUpTestSuite() { register_chapter_encodings(); }
};

std::vector<std::string> every_encoding() {
  register_chapter_encodings();
  std::vector<std::string> names;
  for (const auto& entry : registered_encodings()) names.push_back(entry.name);
  return names;
}

std::shared_ptr<PositionalEncoding> small_encoding(const std::string& name, ag::Rng& rng) {
  EncodingSpec spec;
  spec.model = small_decoder_config();
  spec.max_length = 16;
  spec.dtype = f64;
  auto encoding = make_encoding(name, spec, rng);
  encoding->to(f64);
  return encoding;
}

}  // namespace

// Every hook at sampled ids equals the same hook at 0 .. L-1, read at the ids.
TEST_P(RandomPositions, EveryHookAtSampledIdsReadsTheContiguousResultAtThoseIds) {
  ag::Rng rng(11);
  const auto encoding = small_encoding(GetParam(), rng);
  const auto part = encoding->make_attention_part(rng);
  part->to(f64);
  const DecoderConfig c = small_decoder_config();
  const std::int64_t B = 2, H = c.heads, D = c.width / c.heads;
  const Positions at(kIds);
  // embed
  const Tensor x_full = ag::randn({B, kFull, c.width}, rng, f64);
  EXPECT_LT(max_abs_difference(encoding->embed(take(x_full, 1, kIds), at),
                               take(encoding->embed(x_full, 0), 1, kIds)),
            1e-12);
  // rotate
  const Tensor q_full = ag::randn({B, H, kFull, D}, rng, f64);
  const Tensor k_full = ag::randn({B, H, kFull, D}, rng, f64);
  const Tensor q = take(q_full, 2, kIds), k = take(k_full, 2, kIds);
  const auto [q_turned, k_turned] = part->rotate(q, k, at);
  const auto [q_full_turned, k_full_turned] = part->rotate(q_full, k_full, 0);
  EXPECT_LT(max_abs_difference(q_turned, take(q_full_turned, 2, kIds)), 1e-12);
  EXPECT_LT(max_abs_difference(k_turned, take(k_full_turned, 2, kIds)), 1e-12);
  // bias: the encoding's terms alone (scores 0), the [ids, ids] block of the full ones
  const Tensor terms = part->bias(ag::zeros({B, H, kT, kT}, f64), q, k, at);
  const Tensor full_terms = part->bias(ag::zeros({B, H, kFull, kFull}, f64), q_full, k_full, 0);
  EXPECT_LT(max_abs_difference(terms, take(take(full_terms, 2, kIds), 3, kIds)), 1e-12);
  // values: full-length weights that are zero off the ids
  const Tensor weights = ag::rand_uniform({B, H, kT, kT}, rng, 0, 1, f64);
  const Tensor term = part->values(ag::zeros({B, H, kT, D}, f64), weights, at);
  const Tensor full_term =
      part->values(ag::zeros({B, H, kFull, D}, f64), spread(weights, kFull, kIds), 0);
  EXPECT_LT(max_abs_difference(term, take(full_term, 2, kIds)), 1e-12);
}

// A whole model: contiguous positions from an offset are the integer offset, and sampled
// positions run without a cache.
TEST_P(RandomPositions, AModelRunsAtSampledPositionsAndOffsetsAreUnchanged) {
  ag::Rng rng(5);
  Decoder model(small_decoder_config(), small_encoding(GetParam(), rng), rng);
  model.to(f64);
  const ag::Indices ids{{1, 4, 2, 6, 0, 3, 5, 1, 2, 3}, {2, 5}};
  EXPECT_EQ(model.forward(ids, 3).to_vector(), model.forward(ids, Positions(3)).to_vector());
  const Tensor logits = model.forward(ids, Positions(kIds));
  for (const double v : logits.to_vector()) ASSERT_TRUE(std::isfinite(v)) << GetParam();
}

INSTANTIATE_TEST_SUITE_P(Registry, RandomPositions, ::testing::ValuesIn(every_encoding()),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (char& ch : name)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return name;
                         });

// The trained path at sampled positions, in float64: every parameter's gradient.
TEST(Ch09RandomPositions, GradcheckAtSampledPositions) {
  register_chapter_encodings();
  for (const std::string name : {"rope", "alibi", "learned", "kerple", "fire", "shaw", "xl"}) {
    ag::Rng rng(9);
    DecoderConfig config = small_decoder_config();
    config.layers = 1;
    EncodingSpec spec;
    spec.model = config;
    spec.max_length = 16;
    Decoder model(config, make_encoding(name, spec, rng), rng);
    model.to(f64);
    const ag::Indices ids{{1, 4, 2, 6, 0, 3}, {2, 3}};
    const Positions at(std::vector<std::int64_t>{2, 7, 13});
    const auto result = ag::gradcheck(
        [&](const std::vector<Tensor>&) { return model.forward(ids, at); }, model.parameters());
    EXPECT_TRUE(result.passed) << name << ": " << result.report;
    EXPECT_GT(result.checks, 10) << name;
  }
}

namespace {

TrainConfig tiny_random(const std::string& encoding) {
  TrainConfig c;
  c.task = "shiftk";
  c.encoding = encoding;
  c.model.width = 16;
  c.model.heads = 2;
  c.model.ffn_width = 32;
  c.length = 8;
  c.batch = 4;
  c.steps = 6;
  c.warmup = 1;
  c.eval_every = 3;
  c.eval_sequences = 4;
  c.random_positions = 64;
  return c;
}

}  // namespace

// The option through the lab: in the configuration, resumed bit-identically, evaluated as
// trained (and contiguously when asked), a learned table sized by L_max.
TEST(Ch09RandomPositions, TrainingOptionResumesExactlyAndEvaluatesAsTrained) {
  register_chapter_encodings();
  const auto checkpoint = std::filesystem::temp_directory_path() /
                          ("pe_random_positions_" + std::to_string(::getpid()) + ".agt");
  for (const std::string encoding : {"rope", "learned"}) {
    Trainer whole(tiny_random(encoding));
    whole.train();
    Trainer first(tiny_random(encoding));
    first.train_until(3);
    first.save(checkpoint.string());
    const auto resumed = Trainer::resume(checkpoint.string());
    EXPECT_EQ(resumed->config().random_positions, 64);
    resumed->train();
    const auto a = whole.model().named_parameters(), b = resumed->model().named_parameters();
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i)
      EXPECT_EQ(a[i].second.to_vector(), b[i].second.to_vector()) << encoding << " " << a[i].first;
    ASSERT_EQ(whole.history().size(), resumed->history().size());
    EXPECT_EQ(whole.history().back().eval_loss, resumed->history().back().eval_loss);
    // without the option: other positions, another model
    TrainConfig plain = tiny_random(encoding);
    plain.random_positions = 0;
    Trainer other(plain);
    other.train();
    EXPECT_NE(other.history().back().train_loss, whole.history().back().train_loss) << encoding;
    // evaluation: deterministic, refused past L_max unless contiguous
    EXPECT_EQ(whole.evaluate(16, 4).loss, whole.evaluate(16, 4).loss);
    EXPECT_THROW(whole.evaluate(65, 2), ag::Error);
    if (encoding == "rope") {
      EXPECT_NO_THROW(whole.evaluate(65, 2, EvalPositions::contiguous));
    }
  }
  std::filesystem::remove(checkpoint);
  // a learned table has L_max rows
  Trainer learned(tiny_random("learned"));
  EXPECT_EQ(learned.model().encoding->inspect(64)[0].second.size(0), 64);
  // the configuration: written when on, absent when off, and compared
  TrainConfig on = tiny_random("rope"), off = tiny_random("rope");
  off.random_positions = 0;
  EXPECT_NE(config_to_json(on).find("\"random_positions\": 64"), std::string::npos);
  EXPECT_EQ(config_to_json(off).find("random_positions"), std::string::npos);
  EXPECT_EQ(config_from_json(config_to_json(on)).random_positions, 64);
  EXPECT_NE(config_to_json(on), config_to_json(off));
  // L_max shorter than the training length
  TrainConfig short_range = tiny_random("rope");
  short_range.random_positions = 7;
  EXPECT_THROW(short_range.validate(), ag::Error);
}

// Chapter 8's scaling rules at sampled positions: dynamic NTK's length (and YaRN's) is the
// largest position + 1, so the turn at the ids is the full pass's at those ids.
TEST(Ch09RandomPositions, RopeScalingRulesSeeTheLargestPositionPlusOne) {
  register_chapter_encodings();
  const std::vector<std::map<std::string, std::string>> rules{
      {{"scaling", "dynamic"}, {"train_length", "4"}},
      {{"scaling", "yarn"}, {"scale", "2"}, {"train_length", "4"}}};
  for (const auto& options : rules) {
    ag::Rng rng(4);
    EncodingSpec spec;
    spec.model = small_decoder_config();
    spec.options = options;
    const auto part = make_encoding("rope", spec, rng)->make_attention_part(rng);
    const std::int64_t D = spec.model.width / spec.model.heads;
    const Tensor q_full = ag::randn({1, 2, kFull, D}, rng, f64);
    const auto [q_turned, k_turned] =
        part->rotate(take(q_full, 2, kIds), take(q_full, 2, kIds), Positions(kIds));
    const auto [q_full_turned, k_full_turned] = part->rotate(q_full, q_full, 0);
    EXPECT_LT(max_abs_difference(q_turned, take(q_full_turned, 2, kIds)), 1e-12)
        << options.at("scaling");
    // and it differs from the turn at 0 .. T-1, where the length is T = 5
    const auto [q_short, k_short] = part->rotate(take(q_full, 2, kIds), take(q_full, 2, kIds), 0);
    EXPECT_GT(max_abs_difference(q_turned, q_short), 1e-3) << options.at("scaling");
  }
}
