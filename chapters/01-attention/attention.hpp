// Multi-head self-attention with the encoding hooks and an optional key/value cache.
#pragma once
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "ag/nn.hpp"
#include "chapters/01-attention/positional_encoding.hpp"

namespace pe {

/// Keys and values of one layer for the positions decoded so far: [B, H, T_cached, D].
struct LayerCache {
  ag::Tensor keys;    ///< [B, H, T_cached, D'], after the rotate hook (D' = D but for PoPE's 2D)
  ag::Tensor values;  ///< [B, H, T_cached, D]
  /// What the encoding keeps per cached token (AttentionPositions::content_bias), if anything.
  CacheSlot encoding;
  /// Left padding (chapter 12): per row, how many of the cached columns before its first real
  /// token are padding. Empty when the cache was filled without row starts (no padding). The
  /// padding columns hold zeros; no query ever sees them.
  std::vector<std::int64_t> padding;
  /// T_cached, the number of positions held.
  std::int64_t length() const { return keys.defined() ? keys.size(2) : 0; }
};

/// Where each row of a left-padded batch begins (chapter 12): the sequences are right-aligned,
/// row b starting with p_b padding tokens, then its real tokens at positions 0, 1, ... (Hugging
/// Face's position_ids = cumsum(attention_mask) - 1). first(b) is the position of row b's first
/// column in this call: -p_b for the prefill of a fresh cache (negative: the row begins with
/// padding), then (cached columns) - p_b for each later call, so that every row's next token
/// sits at its own position.
class RowStarts {
 public:
  /// One first position per row of the batch.
  explicit RowStarts(std::vector<std::int64_t> firsts) : firsts_(std::move(firsts)) {}
  /// B, the number of rows.
  std::int64_t rows() const { return static_cast<std::int64_t>(firsts_.size()); }
  /// The position of row b's first column in the call (negative: padding).
  std::int64_t first(std::int64_t row) const { return firsts_.at(static_cast<std::size_t>(row)); }
  /// Every row's first position, in row order.
  const std::vector<std::int64_t>& firsts() const { return firsts_; }

 private:
  std::vector<std::int64_t> firsts_;
};

/// Each row's padding columns, counted from the start of the cache, for a call of `tokens`
/// columns at row starts `rows` over a batch of `batch` rows after `cached` columns whose
/// padding was `stored` (empty: none): padding[b] = cached - rows.first(b). An ag::Error naming
/// `who` when the rows are not `batch`, when a row's start does not continue the cache (its
/// padding differs from the stored one, or is negative), or when a row has no real token among
/// the cached and new columns.
std::vector<std::int64_t> row_padding(const RowStarts& rows, std::int64_t batch,
                                      std::int64_t tokens, std::int64_t cached,
                                      const std::vector<std::int64_t>& stored, const char* who);

/// Multi-head self-attention: softmax(q k^T / sqrt(D) + bias + mask) v, then the output
/// projection, with the encoding's hooks in between.  x: [B, T, C] -> [B, T, C]
class SelfAttention : public ag::Module {
 public:
  /// width C = heads H * head width D. With causal = false every query sees every key (used
  /// only to show permutation equivariance; a decoder is always causal). positions is this
  /// layer's part of the positional encoding; none (nullptr) adds no positional information.
  /// With with_sink_logits, each head learns one sink logit (sink_logits, chapter 12).
  SelfAttention(std::int64_t width, std::int64_t heads, ag::Rng& rng, bool causal = true,
                ag::Dtype dtype = ag::Dtype::f32,
                std::shared_ptr<AttentionPositions> positions = nullptr,
                bool with_sink_logits = false);

  /// x [B, T, C] at positions `at` (0 .. T-1 by default) -> [B, T, C].
  /// With a cache, this call's keys and values are appended to it and the queries attend to
  /// everything cached; the positions must then be contiguous from the cache's length
  /// (sampled positions and a cache are an ag::Error).
  ag::Tensor forward(const ag::Tensor& x, const Positions& at = 0, LayerCache* cache = nullptr);
  /// A left-padded batch (chapter 12): x [B, T, C], row b's columns at rows.first(b) ..
  /// (row_padding checks them against the cache). Each row runs alone on its real columns,
  /// so the encoding's hooks are called once per row with that row's queries, its real cached
  /// keys and Positions(max(first, 0)), exactly as for the row without padding: every encoding
  /// works unchanged, and a row's output is the one it has alone. Padding keys are never seen;
  /// a padding query's output is 0 (meaningless). The cache keeps zeros in the padding columns
  /// and each row's padding (LayerCache::padding); the encoding's CacheSlot is cut per row
  /// (batch on axis 0, tokens on the last axis). Without padding (every row at the cache's
  /// length) this is the plain forward at that offset, not a loop over the rows.
  ag::Tensor forward(const ag::Tensor& x, const RowStarts& rows, LayerCache* cache = nullptr);

  ag::Linear query;         ///< W_q: [C, C]
  ag::Linear key;           ///< W_k: [C, C]
  ag::Linear value;         ///< W_v: [C, C]
  ag::Linear output;        ///< W_o: [C, C]
  std::int64_t heads;       ///< H
  std::int64_t head_width;  ///< D = C / H
  bool causal;              ///< whether queries are kept from later keys
  /// The encoding's hooks for this layer, registered as the child "positions"; never null.
  const std::shared_ptr<AttentionPositions> positions;
  /// One learned logit per head, [H], that joins every query's softmax as a key with no value
  /// (GPT-OSS's attention sinks): a head may then put weight on "nothing" instead of on the
  /// first tokens. Undefined (the plain softmax) unless built with_sink_logits; initialised
  /// to 0. The parameter "sink_logits".
  ag::Tensor sink_logits;
  /// When true, forward keeps a detached copy of its attention weights [B, H, Tq, Tk].
  bool capture_weights = false;
  ag::Tensor last_weights;  ///< the weights kept by the last forward (when capturing)
};

/// softmax over the last axis of scores [B, H, Tq, Tk] with one more logit per head,
/// sink_logits [H], in every row's denominator: w_ij = exp(s_ij) / (exp(s_h) + sum_j exp(s_ij)).
/// The weights of a row then sum to less than 1. An undefined sink_logits gives the plain
/// softmax.
ag::Tensor softmax_with_sinks(const ag::Tensor& scores, const ag::Tensor& sink_logits);

/// The causal mask for Tq queries at q_positions and Tk keys at q_positions.keys(Tk)
/// (an offset q means queries q .. q+Tq-1 and keys 0 .. Tk-1): [Tq, Tk], 1 where the key's
/// position lies after the query's (to be hidden), 0 elsewhere.
ag::Tensor causal_mask(std::int64_t queries, std::int64_t keys, const Positions& q_positions,
                       ag::Dtype dtype);

/// How far back a query may attend besides the causal mask: within a sliding window of the
/// last `window` positions (Mistral's and Gemma's local layers), within its chunk of `chunk`
/// positions (Llama 4's chunked layers), or both. 0 means no such limit.
struct AttentionSpan {
  std::int64_t window = 0;  ///< query i sees key j only when i - j < window; 0: no window
  std::int64_t chunk = 0;   ///< ... and only when floor(i / chunk) == floor(j / chunk); 0: none
};

/// The keys outside each query's span, for Tq queries at q_positions and Tk keys at
/// q_positions.keys(Tk), at absolute positions (so that cached decoding sees the full pass's
/// mask): [Tq, Tk], 1 where key j lies outside query i's window (i - j >= window) or in
/// another chunk (floor(i / chunk) != floor(j / chunk)), 0 elsewhere. Later keys are left to
/// causal_mask. A query always sees itself. A negative window or chunk is an ag::Error.
ag::Tensor span_mask(std::int64_t queries, std::int64_t keys, const Positions& q_positions,
                     const AttentionSpan& span, ag::Dtype dtype);

/// [B, T, H*D] -> [B, H, T, D]
ag::Tensor split_heads(const ag::Tensor& x, std::int64_t heads);
/// [B, H, T, D] -> [B, T, H*D]
ag::Tensor merge_heads(const ag::Tensor& x);

}  // namespace pe
