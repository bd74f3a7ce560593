// Transformer-XL's relative positional encoding (Dai et al., 2019): the score of query i and
// key j is split into content and position terms, the position entering only through a
// fixed sinusoid of the distance i - j, projected by a learned matrix, plus two learned
// global biases u and v that replace the query where the query's position would stand.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "positional_encoding.hpp"

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

/// Transformer-XL through the rotate hook (q + u: terms (a) + (c)) and the bias hook
/// ((q + v) . W_R R_{i-j}: terms (b) + (d)). Parameters: u, v [H, 1, D] shared by the
/// layers, and one W_R [C, C] per layer.
class TransformerXLEncoding : public PositionalEncoding {
 public:
  TransformerXLEncoding(std::int64_t width, std::int64_t heads, std::int64_t layers, ag::Rng& rng,
                        ag::Dtype dtype = ag::Dtype::f32);
  std::string name() const override { return "xl"; }
  /// q, k [B, H, T, D] -> (q + u, k).
  std::pair<ag::Tensor, ag::Tensor> rotate(const ag::Tensor& q, const ag::Tensor& k,
                                           std::int64_t offset, int layer) const override;
  /// scores [B, H, Tq, Tk] + (q - u + v) . W_R R_{i-j} / sqrt(D). The q received here is the
  /// one rotate returned, q + u, so u is taken off again before v is put in.
  ag::Tensor bias(const ag::Tensor& scores, const ag::Tensor& q, std::int64_t q_offset,
                  int layer) const override;
  /// "sinusoid" [length, C] (distances 0 .. length-1), "u" and "v" [H, D].
  std::vector<std::pair<std::string, ag::Tensor>> inspect(std::int64_t length) const override;

  ag::Tensor u, v;                     ///< [H, 1, D]
  std::vector<ag::Tensor> projection;  ///< W_R [C, C], one per layer

 private:
  std::int64_t width_, heads_, head_width_;
};

}  // namespace pe
