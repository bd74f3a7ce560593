// The hook points through which a positional encoding reaches into a decoder. Each later
// chapter adds one subclass (and, if it acts inside attention, one part) and never edits the
// attention code.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ag/nn.hpp"
#include "chapters/01-attention/positions.hpp"

namespace pe {

/// Where an encoding keeps, in a layer's key/value cache, what it computed for the cached
/// tokens beside their keys and values (chapter 10's forgetting gate keeps its running sum of
/// log f there). Undefined until the encoding writes it; an encoding that needs nothing never
/// does.
///
/// The layout is the encoding's own, but with the batch on axis 0 and the cached tokens on the
/// last axis: a left-padded batch (chapter 12, SelfAttention::forward with RowStarts) cuts
/// each row's real tokens out along those two axes and pads the rest with zeros.
struct CacheSlot {
  ag::Tensor tensor;  ///< the encoding's own layout, [B, H, T_cached] for the forgetting gate
};

// [positional-encoding]
/// What an encoding does inside one attention layer: the four hooks that attention calls.
/// Every SelfAttention owns its part (registered as its child "positions"), so a part's
/// parameters belong to that layer alone (Shaw's tables, Transformer-XL's W_R). Parameters
/// that all layers share stay in the encoding; a part may keep a handle to them.
///
/// Every hook receives the absolute positions of the call's queries (positions.hpp), so that
/// decoding one token at a time with a key/value cache sees the same positions as a full
/// pass, and so that a model can train at randomized positions. The keys' positions follow
/// from them (Positions::keys): contiguous queries offset .. offset+Tq-1 attend to keys at
/// 0 .. Tk-1 (the cache starts at the beginning of the sequence); sampled queries attend to
/// keys at the same ids (Tq == Tk, no cache).
///
/// The defaults do nothing, which is exactly the chapter-1 model: no positional information.
class AttentionPositions : public ag::Module {
 public:
  /// Rotary encodings: q, k [B, H, T, D] at `positions` (the new tokens only; cached keys
  /// were rotated when they were new). Returns both, turned: of width D, or of another width
  /// shared by q and k (chapter 11's PoPE returns 2D; the scores still divide by sqrt(D)).
  virtual std::pair<ag::Tensor, ag::Tensor> rotate(const ag::Tensor& q, const ag::Tensor& k,
                                                   const Positions& positions) const {
    (void)positions;
    return {q, k};
  }

  /// Additive score terms: scores [B, H, Tq, Tk] = q . k / sqrt(D), with q [B, H, Tq, D] and
  /// k [B, H, Tk, D] exactly as they made the scores (after rotate; k includes the cached
  /// keys), for terms that depend on the query (Shaw's q_i . a_ij) or on the key
  /// (Transformer-XL's u . k_j). Queries at `queries`, keys at queries.keys(Tk).
  /// Called before the causal mask. Returns scores plus the encoding's terms.
  virtual ag::Tensor bias(const ag::Tensor& scores, const ag::Tensor& q, const ag::Tensor& k,
                          const Positions& queries) const {
    (void)q, (void)k, (void)queries;
    return scores;
  }

  /// Terms computed from the content of the layer's input (chapter 10's forgetting gate,
  /// whose decay each token decides): x [B, Tq, C] is the attention layer's input for this
  /// call's tokens (after the block's LayerNorm), scores [B, H, Tq, Tk] as bias returned them,
  /// queries as for bias. Called after bias, before the causal mask. Returns scores plus the
  /// encoding's terms.
  ///
  /// With a key/value cache, `cached` is this layer's slot for what the encoding keeps per
  /// cached token (the forgetting gate keeps its running sum of log f, [B, H, T_cached]): the
  /// hook reads it for the earlier tokens and extends it by this call's; null without a cache.
  virtual ag::Tensor content_bias(const ag::Tensor& scores, const ag::Tensor& x,
                                  const Positions& queries, CacheSlot* cached) const {
    (void)x, (void)queries, (void)cached;
    return scores;
  }

  /// A term added to the attention output (Shaw's values): out [B, H, Tq, D] = weights @ v,
  /// weights [B, H, Tq, Tk] after softmax, queries as for bias. Returns out plus the
  /// encoding's term.
  virtual ag::Tensor values(const ag::Tensor& out, const ag::Tensor& weights,
                            const Positions& queries) const {
    (void)weights, (void)queries;
    return out;
  }
};

/// A positional encoding: its own hook before the first block, and the part it gives each
/// attention layer.
class PositionalEncoding : public ag::Module {
 public:
  /// The name under which the encoding is registered ("none", "sinusoidal", "rope", ...).
  virtual std::string name() const = 0;

  /// Absolute encodings: x [B, T, C] holds the token embeddings at `positions`; returns x
  /// plus the positions' vectors.
  virtual ag::Tensor embed(const ag::Tensor& x, const Positions& positions) const {
    (void)positions;
    return x;
  }

  /// The part that one attention layer will own, the same kind for every layer; a part with
  /// parameters of its own draws them from rng.
  virtual std::shared_ptr<AttentionPositions> make_attention_part(ag::Rng& rng) const {
    (void)rng;
    return std::make_shared<AttentionPositions>();
  }

  /// The part of layer `layer` (0 .. layers-1) of a model of `layers` blocks: the decoder asks
  /// for one per layer, in order, when it is built. An encoding whose layers differ (chapter
  /// 11's sliding-window, global and NoPE layers) chooses here; the default is
  /// make_attention_part(rng), the same for every layer.
  virtual std::shared_ptr<AttentionPositions> make_layer_part(ag::Rng& rng, std::int64_t layer,
                                                              std::int64_t layers) const {
    (void)layer, (void)layers;
    return make_attention_part(rng);
  }

  /// The encoding's own quantities for `length` positions, by name (the sinusoidal table
  /// "pe", ALiBi's "slopes" and "bias", ...), for `pe inspect` and the chapters' figures.
  virtual std::vector<std::pair<std::string, ag::Tensor>> inspect(std::int64_t length) const {
    (void)length;
    return {};
  }
};
// [positional-encoding]

/// No positional encoding at all (chapter 1, and NoPE in chapter 7).
class NoEncoding : public PositionalEncoding {
 public:
  std::string name() const override { return "none"; }
};

}  // namespace pe
