// The hook points through which a positional encoding reaches into a decoder. Each later
// chapter adds one subclass and never edits the attention code.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ag/nn.hpp"

namespace pe {

// [positional-encoding]
/// Every hook receives absolute positions through an offset, so that decoding one token at a
/// time with a key/value cache sees the same positions as a full pass. Keys always sit at
/// positions 0 .. Tk-1 (the cache starts at the beginning of the sequence).
///
/// The defaults do nothing, which is exactly the chapter-1 model: no positional information.
class PositionalEncoding : public ag::Module {
 public:
  /// The name under which the encoding is registered ("none", "sinusoidal", "rope", ...).
  virtual std::string name() const = 0;

  /// Absolute encodings: x [B, T, C] holds the token embeddings of positions
  /// offset .. offset+T-1; returns x plus the positions' vectors.
  virtual ag::Tensor embed(const ag::Tensor& x, std::int64_t offset) const { (void)offset; return x; }

  /// Rotary encodings: q, k [B, H, T, D] at positions offset .. offset+T-1 (the new tokens
  /// only; cached keys were rotated when they were new).
  virtual std::pair<ag::Tensor, ag::Tensor> rotate(const ag::Tensor& q, const ag::Tensor& k,
                                                   std::int64_t offset, int layer) const {
    (void)offset, (void)layer;
    return {q, k};
  }

  /// Additive score terms (ALiBi, T5, Shaw's keys, Transformer-XL): scores [B, H, Tq, Tk],
  /// already scaled by 1/sqrt(D); q [B, H, Tq, D] for terms that depend on the query (Shaw's
  /// q_i . a_ij). Queries at positions q_offset .. q_offset+Tq-1, keys at 0 .. Tk-1.
  /// Called before the causal mask. Returns scores plus the encoding's terms.
  virtual ag::Tensor bias(const ag::Tensor& scores, const ag::Tensor& q, std::int64_t q_offset,
                          int layer) const {
    (void)q, (void)q_offset, (void)layer;
    return scores;
  }

  /// A term added to the attention output (Shaw's values): out [B, H, Tq, D] = weights @ v,
  /// weights [B, H, Tq, Tk] after softmax. Returns out plus the encoding's term.
  virtual ag::Tensor values(const ag::Tensor& out, const ag::Tensor& weights,
                            std::int64_t q_offset, int layer) const {
    (void)weights, (void)q_offset, (void)layer;
    return out;
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
