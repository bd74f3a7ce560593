#include "chapters/01-attention/attention.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "ag/functional.hpp"

namespace pe {

using ag::Tensor;

SelfAttention::SelfAttention(std::int64_t width, std::int64_t heads_, ag::Rng& rng, bool causal_,
                             ag::Dtype dtype, std::shared_ptr<AttentionPositions> positions_,
                             bool with_sink_logits)
    : query(width, width, rng, true, dtype),
      key(width, width, rng, true, dtype),
      value(width, width, rng, true, dtype),
      output(width, width, rng, true, dtype),
      heads(heads_),
      head_width(heads_ > 0 ? width / heads_ : 0),
      causal(causal_),
      positions(positions_ ? std::move(positions_) : std::make_shared<AttentionPositions>()) {
  ag::check(heads_ > 0 && width % heads_ == 0, "SelfAttention", "width ", width,
            " is not divisible into ", heads_, " heads");
  register_module("query", query);
  register_module("key", key);
  register_module("value", value);
  register_module("output", output);
  register_module("positions", *positions);
  if (with_sink_logits) {
    sink_logits = ag::zeros({heads_}, dtype);
    register_parameter("sink_logits", sink_logits);
  }
}

// [heads]
Tensor split_heads(const Tensor& x, std::int64_t heads) {
  // TASK 1.2 begin: split and merge the heads
  const std::int64_t B = x.size(0), T = x.size(1), C = x.size(2);
  return ag::permute(ag::reshape(x, {B, T, heads, C / heads}), {0, 2, 1, 3});
  // TASK 1.2 end
}

Tensor merge_heads(const Tensor& x) {
  // TASK 1.2 begin: split and merge the heads
  const std::int64_t B = x.size(0), H = x.size(1), T = x.size(2), D = x.size(3);
  return ag::reshape(ag::permute(x, {0, 2, 1, 3}), {B, T, H * D});
  // TASK 1.2 end
}
// [heads]

// [causal-mask]
Tensor causal_mask(std::int64_t queries, std::int64_t keys, const Positions& q_positions,
                   ag::Dtype dtype) {
  q_positions.check_count(queries, "causal_mask");
  const Positions k_positions = q_positions.keys(keys);
  // TASK 1.3 begin: the causal mask
  std::vector<double> mask(static_cast<std::size_t>(queries * keys));
  for (std::int64_t i = 0; i < queries; ++i)
    for (std::int64_t j = 0; j < keys; ++j)
      mask[i * keys + j] = k_positions.at(j) > q_positions.at(i) ? 1.0 : 0.0;
  return ag::from_vector(mask, {queries, keys}, dtype);
  // TASK 1.3 end
}
// [causal-mask]

// [span-mask]
Tensor span_mask(std::int64_t queries, std::int64_t keys, const Positions& q_positions,
                 const AttentionSpan& span, ag::Dtype dtype) {
  ag::check(span.window >= 0 && span.chunk >= 0, "span_mask",
            "window and chunk must be 0 (none) or positive, got ", span.window, " and ",
            span.chunk);
  q_positions.check_count(queries, "span_mask");
  const Positions k_positions = q_positions.keys(keys);
  std::vector<double> mask(static_cast<std::size_t>(queries * keys));
  for (std::int64_t i = 0; i < queries; ++i)
    for (std::int64_t j = 0; j < keys; ++j) {
      const std::int64_t p = q_positions.at(i), s = k_positions.at(j);
      const bool too_far = span.window > 0 && p - s >= span.window;
      const bool other_chunk = span.chunk > 0 && p / span.chunk != s / span.chunk;
      mask[i * keys + j] = too_far || other_chunk ? 1.0 : 0.0;
    }
  return ag::from_vector(mask, {queries, keys}, dtype);
}
// [span-mask]

// [sink-softmax]
Tensor softmax_with_sinks(const Tensor& scores, const Tensor& sink_logits) {
  if (!sink_logits.defined()) return ag::softmax(scores);
  ag::check(scores.dim() == 4 && sink_logits.dim() == 1 && sink_logits.size(0) == scores.size(1),
            "softmax_with_sinks", "expected scores [B, H, Tq, Tk] and sink logits [H], got ",
            ag::shape_string(scores.shape()), " and ", ag::shape_string(sink_logits.shape()));
  const std::int64_t B = scores.size(0), H = scores.size(1), Tq = scores.size(2),
                     Tk = scores.size(3);
  // the sink is one more column of every row, the head's logit; softmax, then drop it
  Tensor column =
      ag::add(ag::zeros({B, H, Tq, 1}, scores.dtype()), ag::reshape(sink_logits, {1, H, 1, 1}));
  return ag::slice(ag::softmax(ag::concat({scores, column}, 3)), 3, 0, Tk);
}
// [sink-softmax]

// [attention-forward]
Tensor SelfAttention::forward(const Tensor& x, const Positions& at, LayerCache* cache) {
  ag::check(x.dim() == 3 && x.size(2) == heads * head_width, "SelfAttention", "expected x [B, T, ",
            heads * head_width, "], got ", ag::shape_string(x.shape()));
  at.check_count(x.size(1), "SelfAttention");
  if (cache) {
    ag::check(at.is_contiguous() && at.first() == cache->length(), "SelfAttention",
              "positions from ", at.first(),
              at.is_contiguous() ? "" : " (sampled: a cache needs contiguous ones)",
              " do not continue the cache of length ", cache->length());
    const std::int64_t cached_rows = cache->length() > 0 ? cache->keys.size(0) : x.size(0);
    ag::check(cached_rows == x.size(0), "SelfAttention", "the cache holds ", cached_rows,
              " rows but x has ", x.size(0));
    for (std::int64_t p : cache->padding)
      ag::check(p == 0, "SelfAttention",
                "the cache holds left-padded rows: continue it with RowStarts, not Positions");
  }
  Tensor q = split_heads(query.forward(x), heads);  // [B, H, T, D]
  Tensor k = split_heads(key.forward(x), heads);
  Tensor v = split_heads(value.forward(x), heads);
  std::tie(q, k) = positions->rotate(q, k, at);
  if (cache) {
    if (cache->length() > 0) {
      k = ag::concat({cache->keys, k}, 2);
      v = ag::concat({cache->values, v}, 2);
    }
    cache->keys = k.detach();
    cache->values = v.detach();
  }
  // TASK 1.4 begin: scaled dot-product attention
  // scores[b, h, i, j] = q_i . k_j / sqrt(D)
  Tensor scores = ag::mul(ag::matmul_transposed(q, k), 1.0 / std::sqrt(double(head_width)));
  scores = positions->bias(scores, q, k, at);
  scores = positions->content_bias(scores, x, at, cache ? &cache->encoding : nullptr);
  if (causal)
    scores = ag::masked_fill(scores, causal_mask(q.size(2), k.size(2), at, x.dtype()),
                             -std::numeric_limits<double>::infinity());
  Tensor weights = softmax_with_sinks(scores, sink_logits);  // [B, H, Tq, Tk]
  if (capture_weights) last_weights = weights.detach().clone();
  Tensor out = positions->values(ag::matmul(weights, v), weights, at);
  return output.forward(merge_heads(out));
  // TASK 1.4 end
}
// [attention-forward]

std::vector<std::int64_t> row_padding(const RowStarts& rows, std::int64_t batch,
                                      std::int64_t tokens, std::int64_t cached,
                                      const std::vector<std::int64_t>& stored, const char* who) {
  ag::check(rows.rows() == batch, who, "expected one row start per row of the batch (", batch,
            "), got ", rows.rows());
  ag::check(stored.empty() || static_cast<std::int64_t>(stored.size()) == batch, who,
            "the cache holds ", stored.size(), " rows but the batch has ", batch);
  std::vector<std::int64_t> padding(static_cast<std::size_t>(batch));
  for (std::int64_t b = 0; b < batch; ++b) {
    const std::int64_t first = rows.first(b), pad = cached - first;
    // a fresh cache (or none) takes any padding; a filled one only the padding it holds
    const std::int64_t expected =
        stored.empty() ? (cached == 0 ? std::max<std::int64_t>(pad, 0) : 0) : stored[b];
    ag::check(pad == expected, who, "row ", b, " starts at position ", first,
              ", which does not continue the cache: after its ", cached, " columns (", expected,
              " of them padding) the row continues at ", cached - expected);
    ag::check(first + tokens > 0, who, "row ", b, " has no real token: its ", tokens,
              " columns from position ", first, " are all padding");
    padding[b] = pad;
  }
  return padding;
}

namespace {

// x with `count` zeros put before it along `axis`
Tensor pad_before(const Tensor& x, std::int64_t axis, std::int64_t count) {
  if (count == 0) return x;
  ag::Shape shape = x.shape();
  shape[axis] = count;
  return ag::concat({ag::zeros(shape, x.dtype()), x}, axis);
}

// row b of x [B, ...] with the columns start..end-1 of `axis`: [1, ..., end - start, ...]
Tensor row_columns(const Tensor& x, std::int64_t b, std::int64_t axis, std::int64_t start,
                   std::int64_t end) {
  return ag::slice(ag::slice(x, 0, b, b + 1), axis, start, end);
}

}  // namespace

// [padded-forward]
Tensor SelfAttention::forward(const Tensor& x, const RowStarts& rows, LayerCache* cache) {
  ag::check(x.dim() == 3 && x.size(2) == heads * head_width, "SelfAttention", "expected x [B, T, ",
            heads * head_width, "], got ", ag::shape_string(x.shape()));
  const std::int64_t B = x.size(0), T = x.size(1), L = cache ? cache->length() : 0;
  const std::vector<std::int64_t> padding = row_padding(
      rows, B, T, L, cache ? cache->padding : std::vector<std::int64_t>{}, "SelfAttention");
  if (std::all_of(padding.begin(), padding.end(), [](std::int64_t p) { return p == 0; }))
    return forward(x, Positions(L), cache);  // no padding: the plain path, at full speed
  std::vector<Tensor> outs, keys, values, slots, weights;
  for (std::int64_t b = 0; b < B; ++b) {
    // row b alone: its real cached columns and its real new ones, at positions from 0
    const std::int64_t cached_real = std::max<std::int64_t>(L - padding[b], 0);
    const std::int64_t skip = std::max<std::int64_t>(padding[b] - L, 0);  // padding in x
    LayerCache row;
    if (cache && cached_real > 0) {
      row.keys = row_columns(cache->keys, b, 2, L - cached_real, L);
      row.values = row_columns(cache->values, b, 2, L - cached_real, L);
      const Tensor& slot = cache->encoding.tensor;
      if (slot.defined())
        row.encoding.tensor = row_columns(slot, b, slot.dim() - 1, L - cached_real, L);
    }
    const Tensor out =
        forward(row_columns(x, b, 1, skip, T), Positions(cached_real), cache ? &row : nullptr);
    outs.push_back(pad_before(out, 1, skip));  // a padding query's output: 0
    if (capture_weights)                       // padding queries and keys get weight 0
      weights.push_back(
          pad_before(pad_before(last_weights, 2, skip), 3, L + T - last_weights.size(3)));
    if (!cache) continue;
    const std::int64_t lead = L + T - row.length();  // row b's padding columns in the cache
    keys.push_back(pad_before(row.keys, 2, lead));
    values.push_back(pad_before(row.values, 2, lead));
    const Tensor& slot = row.encoding.tensor;
    if (slot.defined()) slots.push_back(pad_before(slot, slot.dim() - 1, lead));
  }
  if (capture_weights) last_weights = ag::concat(weights, 0);
  if (cache) {
    ag::check(slots.empty() || static_cast<std::int64_t>(slots.size()) == B, "SelfAttention",
              "the encoding kept a cache slot for ", slots.size(), " of ", B, " rows");
    cache->keys = ag::concat(keys, 0).detach();
    cache->values = ag::concat(values, 0).detach();
    if (!slots.empty()) cache->encoding.tensor = ag::concat(slots, 0).detach();
    cache->padding = padding;
  }
  return ag::concat(outs, 0);
}
// [padded-forward]

}  // namespace pe
