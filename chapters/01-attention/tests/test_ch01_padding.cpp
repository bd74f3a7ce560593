// Left padding (RowStarts): each row of a right-aligned batch gets the logits it has alone,
// its hooks see plain positions from 0, padding keys get no weight, and a row start that
// does not fit is a clear error.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <vector>

#include "ag/gradcheck.hpp"
#include "chapters/01-attention/decoder.hpp"
#include "chapters/01-attention/permutation.hpp"
#include "chapters/01-attention/tests/model_check.hpp"

using namespace pe;
using ag::Tensor;

namespace {

const auto f64 = ag::Dtype::f64;

// What the stamp parts saw: per hook call, the batch, the first position and the cached
// slot's positions.
struct StampLog {
  std::vector<std::int64_t> batches, firsts;
  bool slot_out_of_order = false;  // a cached slot that was not 0, 1, 2, ... in some row
};

// Positions in every hook, and a cache slot: a distance penalty -0.3 (i - j) in bias, and in
// content_bias +0.05 times each key's position, read for cached keys from the CacheSlot
// [B, H, T_cached] the part keeps. A padded batch that cut the slot wrongly would change the
// logits (and is caught in the log).
struct StampPart : AttentionPositions {
  explicit StampPart(std::shared_ptr<StampLog> log_) : log(std::move(log_)) {}
  Tensor bias(const Tensor& scores, const Tensor& q, const Tensor& k,
              const Positions& queries) const override {
    log->batches.push_back(q.size(0));
    log->firsts.push_back(queries.first());
    const std::int64_t Tq = q.size(2), Tk = k.size(2);
    const Positions keys = queries.keys(Tk);
    std::vector<double> penalty;
    for (std::int64_t i = 0; i < Tq; ++i)
      for (std::int64_t j = 0; j < Tk; ++j)
        penalty.push_back(-0.3 * double(queries.at(i) - keys.at(j)));
    return ag::add(scores, ag::from_vector(penalty, {Tq, Tk}, scores.dtype()));
  }
  Tensor content_bias(const Tensor& scores, const Tensor&, const Positions& queries,
                      CacheSlot* cached) const override {
    const std::int64_t B = scores.size(0), H = scores.size(1), Tq = scores.size(2);
    std::vector<double> stamps;
    for (std::int64_t i = 0; i < B * H * Tq; ++i) stamps.push_back(double(queries.at(i % Tq)));
    Tensor keys = ag::from_vector(stamps, {B, H, Tq}, scores.dtype());
    if (cached && cached->tensor.defined()) {
      const std::vector<double> old = cached->tensor.to_vector();
      const std::int64_t n = cached->tensor.size(2);
      for (std::size_t i = 0; i < old.size(); ++i)
        if (old[i] != double(std::int64_t(i) % n)) log->slot_out_of_order = true;
      keys = ag::concat({cached->tensor, keys}, 2);
    }
    if (cached) cached->tensor = keys.detach();
    ag::check(keys.size(2) == scores.size(3), "stamp", "slot and scores disagree");
    return ag::add(scores, ag::mul(ag::reshape(keys, {B, H, 1, keys.size(2)}), 0.05));
  }
  std::shared_ptr<StampLog> log;
};

// The stamp parts, and 0.1 times the position added to every embedding.
struct StampEncoding : PositionalEncoding {
  std::string name() const override { return "stamp"; }
  Tensor embed(const Tensor& x, const Positions& positions) const override {
    std::vector<double> p;
    for (std::int64_t id : positions.ids(x.size(1))) p.push_back(0.1 * double(id));
    return ag::add(x, ag::from_vector(p, {1, x.size(1), 1}, x.dtype()));
  }
  std::shared_ptr<AttentionPositions> make_attention_part(ag::Rng&) const override {
    return std::make_shared<StampPart>(log);
  }
  std::shared_ptr<StampLog> log = std::make_shared<StampLog>();
};

struct Stamped {
  std::shared_ptr<StampEncoding> encoding = std::make_shared<StampEncoding>();
  std::unique_ptr<Decoder> model;
  explicit Stamped(DecoderConfig config = small_decoder_config()) {
    ag::Rng rng(3);
    model = std::make_unique<Decoder>(config, encoding, rng);
    model->to(f64);
  }
};

// Rows of 5, 2 and 4 tokens, padded with 0.
const std::vector<std::vector<std::int64_t>> kRows = {{1, 4, 2, 6, 3}, {7, 2}, {5, 1, 2, 3}};
const ag::Indices kPadded{{1, 4, 2, 6, 3, 0, 0, 0, 7, 2, 0, 5, 1, 2, 3}, {3, 5}};
const RowStarts kStarts({0, -3, -1});

Tensor row_of(const Tensor& x, std::int64_t b) { return ag::slice(x, 0, b, b + 1); }

TEST(LeftPadding, EachRowGetsItsLogitsAloneAtPrefillAndDecoding) {
  Stamped s;
  ag::NoGradGuard no_grad;
  KVCache cache;
  const Tensor prefill = s.model->forward(kPadded, kStarts, &cache);
  const std::vector<std::int64_t> next = {8, 3, 6}, after = {2, 2, 7};
  const Tensor step1 = s.model->forward({next, {3, 1}}, RowStarts({5, 2, 4}), &cache);
  const Tensor step2 = s.model->forward({after, {3, 1}}, RowStarts({6, 3, 5}), &cache);
  EXPECT_FALSE(s.encoding->log->slot_out_of_order);
  for (std::int64_t b = 0; b < 3; ++b) {
    std::vector<std::int64_t> alone = kRows[b];
    alone.push_back(next[b]);
    alone.push_back(after[b]);
    const std::int64_t n = static_cast<std::int64_t>(kRows[b].size());
    const Tensor full = s.model->forward({alone, {1, n + 2}});
    EXPECT_LT(
        max_abs_difference(ag::slice(row_of(prefill, b), 1, 5 - n, 5), ag::slice(full, 1, 0, n)),
        1e-12)
        << "row " << b;
    EXPECT_LT(max_abs_difference(row_of(step1, b), ag::slice(full, 1, n, n + 1)), 1e-12);
    EXPECT_LT(max_abs_difference(row_of(step2, b), ag::slice(full, 1, n + 1, n + 2)), 1e-12);
  }
  for (double v : prefill.to_vector()) ASSERT_TRUE(std::isfinite(v));  // padding too
}

// The stamps would also catch a row's positions shifted by its padding: the test above fails
// if the rows are given the batch's positions instead (the padded row at 0 .. 4).
TEST(LeftPadding, TheBatchPositionsWouldGiveOtherLogits) {
  Stamped s;
  ag::NoGradGuard no_grad;
  const Tensor padded = s.model->forward(kPadded, kStarts);
  const Tensor plain = s.model->forward(kPadded);
  EXPECT_GT(max_abs_difference(ag::slice(row_of(padded, 1), 1, 3, 5),
                               ag::slice(row_of(plain, 1), 1, 3, 5)),
            1e-3);
}

TEST(LeftPadding, HooksSeeOneRowAtPlainPositionsFromZero) {
  Stamped s;
  ag::NoGradGuard no_grad;
  KVCache cache;
  s.model->forward(kPadded, kStarts, &cache);
  // two layers, three rows each: one row at a time, its real tokens from position 0
  EXPECT_EQ(s.encoding->log->batches, (std::vector<std::int64_t>(6, 1)));
  EXPECT_EQ(s.encoding->log->firsts, (std::vector<std::int64_t>(6, 0)));
  s.encoding->log->firsts.clear();
  s.model->forward({{1, 1, 1}, {3, 1}}, RowStarts({5, 2, 4}), &cache);
  EXPECT_EQ(s.encoding->log->firsts, (std::vector<std::int64_t>{5, 2, 4, 5, 2, 4}));
  EXPECT_EQ(cache.length(), 6);
  EXPECT_EQ(cache.layers[0].padding, (std::vector<std::int64_t>{0, 3, 1}));
}

TEST(LeftPadding, PaddingKeysGetNoWeightAndPaddingQueriesNone) {
  Stamped s;
  ag::NoGradGuard no_grad;
  s.model->capture_attention(true);
  s.model->forward(kPadded, kStarts);
  const Tensor weights = s.model->attention_weights()[0];  // [3, H, 5, 5]
  ASSERT_EQ(weights.shape(), (ag::Shape{3, 2, 5, 5}));
  const std::vector<double> w = weights.to_vector();
  const std::vector<std::int64_t> padding = {0, 3, 1};
  for (std::int64_t b = 0; b < 3; ++b)
    for (std::int64_t h = 0; h < 2; ++h)
      for (std::int64_t i = 0; i < 5; ++i) {
        double total = 0, on_padding = 0;
        for (std::int64_t j = 0; j < 5; ++j) {
          const double x = w[((b * 2 + h) * 5 + i) * 5 + j];
          total += x;
          if (j < padding[b]) on_padding += x;
        }
        EXPECT_EQ(on_padding, 0.0) << "row " << b << " query " << i;
        EXPECT_NEAR(total, i < padding[b] ? 0.0 : 1.0, 1e-12) << "row " << b << " query " << i;
      }
}

TEST(LeftPadding, WithoutPaddingItIsThePlainPath) {
  Stamped s;
  ag::NoGradGuard no_grad;
  const ag::Indices ids{{1, 4, 2, 6, 7, 2, 5, 1}, {2, 4}};
  EXPECT_EQ(max_abs_difference(s.model->forward(ids, RowStarts({0, 0})), s.model->forward(ids)),
            0.0);
  KVCache plain, rows;
  s.model->forward(ids, 0, &plain);
  s.model->forward(ids, RowStarts({0, 0}), &rows);
  s.encoding->log->batches.clear();
  const Tensor a = s.model->forward({{3, 3}, {2, 1}}, 4, &plain);
  const Tensor b = s.model->forward({{3, 3}, {2, 1}}, RowStarts({4, 4}), &rows);
  EXPECT_EQ(max_abs_difference(a, b), 0.0);
  EXPECT_EQ(s.encoding->log->batches, (std::vector<std::int64_t>(4, 2)));  // not row by row
}

TEST(LeftPadding, RefusesRowStartsThatDoNotFit) {
  Stamped s;
  ag::NoGradGuard no_grad;
  EXPECT_THROW(s.model->forward(kPadded, RowStarts({0, -3})), ag::Error);      // 2 starts, 3 rows
  EXPECT_THROW(s.model->forward(kPadded, RowStarts({0, -5, -1})), ag::Error);  // no real token
  EXPECT_THROW(s.model->forward(kPadded, RowStarts({0, 1, 0})), ag::Error);    // nothing cached
  KVCache cache;
  s.model->forward(kPadded, kStarts, &cache);
  // the next positions are 5, 2, 4: row 1 at 3 skips one, and plain positions forget padding
  EXPECT_THROW(s.model->forward({{1, 1, 1}, {3, 1}}, RowStarts({5, 3, 4}), &cache), ag::Error);
  EXPECT_THROW(s.model->forward({{1, 1, 1}, {3, 1}}, 5, &cache), ag::Error);
  EXPECT_THROW(s.model->forward({{1, 1}, {2, 1}}, RowStarts({5, 2}), &cache), ag::Error);
  try {
    s.model->forward({{1, 1, 1}, {3, 1}}, RowStarts({5, 3, 4}), &cache);
  } catch (const ag::Error& e) {
    EXPECT_NE(std::string(e.what()).find("does not continue the cache"), std::string::npos)
        << e.what();
  }
}

TEST(LeftPadding, APlainCacheRefusesAnotherBatchSize) {
  Stamped s;
  ag::NoGradGuard no_grad;
  KVCache cache;
  s.model->forward({{1, 2, 3, 4}, {2, 2}}, 0, &cache);
  EXPECT_THROW(s.model->forward({{1, 2, 3}, {3, 1}}, 2, &cache), ag::Error);
}

TEST(LeftPadding, GradientsThroughThePaddedRowsAreRight) {
  DecoderConfig config = small_decoder_config();
  config.layers = 1;
  Stamped s(config);
  const ag::Indices ids{{0, 0, 4, 2, 1, 4, 2, 6}, {2, 4}};
  const RowStarts starts({-2, 0});
  // padding logits are meaningless: only the real columns' enter the loss
  const auto real = [&](const std::vector<Tensor>&) {
    const Tensor logits = s.model->forward(ids, starts);
    return ag::concat(
        {ag::slice(row_of(logits, 0), 1, 2, 4), ag::slice(row_of(logits, 1), 1, 0, 4)}, 1);
  };
  const ag::GradcheckResult result = ag::gradcheck(real, s.model->parameters());
  EXPECT_TRUE(result.passed) << result.report;
}

}  // namespace
