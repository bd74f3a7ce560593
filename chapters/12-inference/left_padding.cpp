#include "chapters/12-inference/left_padding.hpp"

#include <algorithm>

namespace pe {

PaddedBatch left_pad(const std::vector<std::vector<std::int64_t>>& sequences, std::int64_t pad_id) {
  ag::check(!sequences.empty(), "left_pad", "needs at least one sequence");
  ag::check(pad_id >= 0, "left_pad", "the pad id must not be negative, got ", pad_id);
  std::int64_t longest = 0;
  for (std::size_t b = 0; b < sequences.size(); ++b) {
    ag::check(!sequences[b].empty(), "left_pad", "sequence ", b, " is empty");
    longest = std::max<std::int64_t>(longest, static_cast<std::int64_t>(sequences[b].size()));
  }
  const std::int64_t B = static_cast<std::int64_t>(sequences.size());
  PaddedBatch batch;
  batch.ids.shape = {B, longest};
  std::vector<std::int64_t> firsts;
  for (const std::vector<std::int64_t>& sequence : sequences) {
    const std::int64_t n = static_cast<std::int64_t>(sequence.size());
    batch.ids.values.insert(batch.ids.values.end(), static_cast<std::size_t>(longest - n), pad_id);
    batch.ids.values.insert(batch.ids.values.end(), sequence.begin(), sequence.end());
    firsts.push_back(n - longest);
    batch.lengths.push_back(n);
  }
  batch.starts = RowStarts(firsts);
  return batch;
}

namespace {

// The largest logit's index in each row of logits [B, 1, V].
std::vector<std::int64_t> greedy(const ag::Tensor& logits) {
  const std::int64_t B = logits.size(0), V = logits.size(2);
  const std::vector<double> values = logits.to_vector();
  std::vector<std::int64_t> chosen;
  for (std::int64_t b = 0; b < B; ++b) {
    const auto row = values.begin() + b * V;
    chosen.push_back(std::max_element(row, row + V) - row);
  }
  return chosen;
}

}  // namespace

// [padded-decode]
PaddedDecoding padded_greedy_decode(Decoder& model, const PaddedBatch& batch, std::int64_t steps) {
  ag::check(steps >= 0, "padded_greedy_decode", "steps must not be negative, got ", steps);
  ag::NoGradGuard no_grad;
  const std::int64_t B = batch.ids.shape.at(0), T = batch.ids.shape.at(1);
  PaddedDecoding out;
  out.tokens.resize(static_cast<std::size_t>(B));
  KVCache cache;
  out.prefill = model.forward(batch.ids, batch.starts, &cache);
  ag::Tensor last = ag::slice(out.prefill, 1, T - 1, T);
  for (std::int64_t step = 0; step < steps; ++step) {
    const std::vector<std::int64_t> next = greedy(last);
    std::vector<std::int64_t> firsts;
    for (std::int64_t b = 0; b < B; ++b) {
      out.tokens[b].push_back(next[b]);
      // the row's next position: the cached columns minus its padding
      firsts.push_back(cache.length() - (T - batch.lengths[b]));
    }
    last = model.forward({next, {B, 1}}, RowStarts(firsts), &cache);
    out.steps.push_back(last);
  }
  return out;
}
// [padded-decode]

}  // namespace pe
