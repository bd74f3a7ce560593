// Transformer-XL's relative positional encoding (Dai et al., 2019): the score of query i and
// key j is split into content and position terms, the position entering only through a
// fixed sinusoid of the distance i - j, projected by a learned matrix, plus two learned
// global biases u and v that replace the query where the query's position would stand.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "chapters/01-attention/positional_encoding.hpp"

namespace pe {

/// The sinusoid of chapter 2 at the distances first, first+1, .., first+count-1, which may be
/// negative (sin is odd and cos even, so a negative distance flips the sine columns).
/// -> [count, width]; width even.
ag::Tensor relative_sinusoid(std::int64_t first, std::int64_t count, std::int64_t width,
                             ag::Dtype dtype);

/// The position terms (b) + (d) of the paper, not yet scaled:
/// term[b, h, i, j] = query[b, h, i] . projected[h, (q_offset + i - j) - first]
/// with first = q_offset - (Tk - 1), the smallest distance of the block.
/// query [B, H, Tq, D] (q + v), projected [H, Tq + Tk - 1, D] (W_R R of every distance).
/// -> [B, H, Tq, Tk]
ag::Tensor xl_position_term(const ag::Tensor& query, const ag::Tensor& projected,
                            std::int64_t keys);

/// The same terms for any positions (randomized ones): the distances p_i - p_j of the pairs
/// form no band, so there is no shift; W_R R_{p_i - p_j} for every pair [Tq, Tk, C], and one
/// product per query. query [B, H, Tq, D] (q + v), projection W_R [C, C], queries at
/// q_positions, keys at q_positions.keys(Tk). -> [B, H, Tq, Tk]. Memory Tq Tk C.
ag::Tensor xl_pairwise_position_term(const ag::Tensor& query, const ag::Tensor& projection,
                                     const Positions& q_positions, std::int64_t keys);

/// Transformer-XL's part in one attention layer, through the bias hook: the layer's own W_R
/// [C, C], and handles to the encoding's u and v [H, 1, D], which all layers share.
class TransformerXLPositions : public AttentionPositions {
 public:
  /// u, v: the encoding's parameters (registered there, not here); W_R is drawn from rng.
  TransformerXLPositions(ag::Tensor u, ag::Tensor v, std::int64_t width, ag::Rng& rng);
  /// The scores are term (a), q_i . k_j / sqrt(D). Adds (c) + (b) + (d), scaled alike:
  /// scores [B, H, Tq, Tk] + (u . k_j + (q_i + v) . W_R R_{i-j}) / sqrt(D).
  /// Queries at q_positions, keys at q_positions.keys(Tk); for sampled positions the
  /// distances p_i - p_j form no band, and the term goes through xl_pairwise_position_term.
  ag::Tensor bias(const ag::Tensor& scores, const ag::Tensor& q, const ag::Tensor& k,
                  const Positions& q_positions) const override;

  ag::Tensor projection;  ///< W_R [C, C]
  ag::Tensor u;  ///< content bias [H, 1, D], shared with the encoding and every other layer
  ag::Tensor v;  ///< position bias [H, 1, D], shared likewise

 private:
  std::int64_t width_, heads_ = 0, head_width_ = 0;
};

/// Transformer-XL: the global biases u and v, and for each attention layer a
/// TransformerXLPositions with a W_R of its own.
class TransformerXLEncoding : public PositionalEncoding {
 public:
  /// \param width C  \param heads H  \param rng the initial draws of u, v and each W_R
  /// \param dtype the parameters' element type
  TransformerXLEncoding(std::int64_t width, std::int64_t heads, ag::Rng& rng,
                        ag::Dtype dtype = ag::Dtype::f32);
  std::string name() const override { return "xl"; }
  /// A TransformerXLPositions holding u and v, with its W_R drawn from rng.
  std::shared_ptr<AttentionPositions> make_attention_part(ag::Rng& rng) const override;
  /// "sinusoid" [length, C] (distances 0 .. length-1), "u" and "v" [H, D].
  std::vector<std::pair<std::string, ag::Tensor>> inspect(std::int64_t length) const override;

  ag::Tensor u;  ///< the global content bias: [H, 1, D]
  ag::Tensor v;  ///< the global position bias: [H, 1, D]

 private:
  std::int64_t width_, heads_, head_width_;
};

}  // namespace pe
