// ALiBi (attention with linear biases): no position vectors at all; each head adds to the
// score of query i and key j a penalty proportional to their distance, -slope_h * (i - j).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "chapters/01-attention/positional_encoding.hpp"

namespace pe {

/// The heads' slopes as in Press et al. (2022). For H a power of two: the geometric sequence
/// 2^(-8/H), 2^(-16/H), ..., 2^(-8). Otherwise the slopes of the largest power of two P < H,
/// followed by the first H - P of every other slope of 2P (2P's 1st, 3rd, 5th, ...).
/// H >= 1.
std::vector<double> alibi_slopes(std::int64_t heads);

/// bias[h, i, j] = -slope_h * (p_i - p_j): query i at position p_i of q_positions (an offset o
/// means o .. o+Tq-1), key j at p_j of q_positions.keys(Tk) (then 0 .. Tk-1).
/// -> [H, Tq, Tk]. Future keys (p_j > p_i) get a positive value here;
/// the causal mask replaces it with -infinity afterwards.
ag::Tensor alibi_bias(std::int64_t heads, std::int64_t queries, std::int64_t keys,
                      const Positions& q_positions, ag::Dtype dtype);

/// ALiBi's part in each attention layer, through the bias hook. No parameters: every layer
/// adds the same bias.
class AlibiPositions : public AttentionPositions {
 public:
  /// \param heads H, which fixes the slopes
  explicit AlibiPositions(std::int64_t heads);
  /// scores [B, H, Tq, Tk] -> scores + alibi_bias(H, Tq, Tk, q_positions); q and k are not used.
  ag::Tensor bias(const ag::Tensor& scores, const ag::Tensor& q, const ag::Tensor& k,
                  const Positions& q_positions) const override;

 private:
  std::int64_t heads_;
};

/// ALiBi: nothing before the first block; each attention layer gets an AlibiPositions. No
/// parameters, no options.
class AlibiEncoding : public PositionalEncoding {
 public:
  /// \param heads H, which fixes the slopes
  explicit AlibiEncoding(std::int64_t heads);
  std::string name() const override { return "alibi"; }
  /// An AlibiPositions for this encoding's heads.
  std::shared_ptr<AttentionPositions> make_attention_part(ag::Rng& rng) const override;
  /// "slopes" [H] and "bias" [H, length, length] (queries and keys at 0 .. length-1).
  std::vector<std::pair<std::string, ag::Tensor>> inspect(std::int64_t length) const override;

  std::int64_t heads() const { return heads_; }                  ///< H
  const std::vector<double>& slopes() const { return slopes_; }  ///< alibi_slopes(H)

 private:
  std::int64_t heads_;
  std::vector<double> slopes_;
};

/// Adds "alibi" to the encoding registry.
void register_ch06_encodings();

}  // namespace pe
