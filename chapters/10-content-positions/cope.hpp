// CoPE (Golovneva, Wang, Weston and Sukhbaatar, "Contextual Position Encoding: Learning to Count
// What's Important", 2024): positions counted by the content. Query i opens a gate on each key
// before it, g_ij = sigmoid(q_i . k_j / sqrt(D)), and the position of key j seen from i is the
// number of open gates between them,
//   p_ij = sum over t = j .. i of g_it,
// so a head can count letters of one kind, or sentences, instead of tokens. p is fractional; a
// learned vector e[p] per integer position is interpolated between e[floor p] and e[ceil p], and
// the logit gains q_i . e[p_ij] / sqrt(D). Since the interpolation is linear, that term is the
// same interpolation of the integer logits q_i . e[t]: [Tq, P] products instead of a [Tq, Tk, D]
// tensor of interpolated vectors.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "chapters/01-attention/positional_encoding.hpp"

namespace pe {

/// The gates g_ij = sigmoid(scores_ij) of the keys at or before each query, 0 for the keys
/// after it (which the causal mask will hide). scores [B, H, Tq, Tk] = q . k / sqrt(D), queries
/// at q_positions, keys at q_positions.keys(Tk).  -> [B, H, Tq, Tk]
ag::Tensor cope_gates(const ag::Tensor& scores, const Positions& q_positions);

/// The positions p_ij = sum over t >= j of gates_it: a cumulative sum along the keys taken from
/// the query's end (gates after the query are 0, so the sum runs over t = j .. i).
/// gates [B, H, Tq, Tk] -> [B, H, Tq, Tk]
ag::Tensor cope_positions(const ag::Tensor& gates);

/// The position term q_i . e[p_ij] / sqrt(D), with e interpolated between integer positions.
/// q [B, H, Tq, D], embeddings [P, D] (e[0] .. e[P-1]), positions [B, H, Tq, Tk]; a position past
/// P-1 takes e[P-1] (the paper's clamp).  -> [B, H, Tq, Tk]
ag::Tensor cope_position_logits(const ag::Tensor& q, const ag::Tensor& embeddings,
                                const ag::Tensor& positions);

/// CoPE's part in one attention layer, through the bias hook: the layer's table of position
/// vectors e [P, D], shared by its heads (as in the official code).
class CopePositions : public AttentionPositions {
 public:
  /// P = positions >= 2 integer positions 0 .. P-1 of width D = head_width, starting at 0 as
  /// the official code starts them.
  CopePositions(std::int64_t positions, std::int64_t head_width, ag::Dtype dtype = ag::Dtype::f32);
  /// scores + cope_position_logits(q, embeddings, cope_positions(cope_gates(scores, queries))).
  ag::Tensor bias(const ag::Tensor& scores, const ag::Tensor& q, const ag::Tensor& k,
                  const Positions& queries) const override;
  ag::Tensor embeddings;  ///< e: [P, D]
};

/// CoPE: nothing before the first block; each attention layer gets a CopePositions.
class CopeEncoding : public PositionalEncoding {
 public:
  /// P = positions integer positions (the official default is the training length + 1, since
  /// a count runs from 0 to T), head width D.
  CopeEncoding(std::int64_t positions, std::int64_t head_width, ag::Dtype dtype = ag::Dtype::f32);
  std::string name() const override { return "cope"; }
  std::shared_ptr<AttentionPositions> make_attention_part(ag::Rng& rng) const override;
  /// "count" [length, length]: p_ij when every gate is open (i - j + 1 at and below the
  /// diagonal, 0 above), the token distance counted inclusively, which CoPE starts from.
  std::vector<std::pair<std::string, ag::Tensor>> inspect(std::int64_t length) const override;
  std::int64_t positions() const { return positions_; }  ///< P

 private:
  std::int64_t positions_;
  std::int64_t head_width_;
  ag::Dtype dtype_;
};

}  // namespace pe
