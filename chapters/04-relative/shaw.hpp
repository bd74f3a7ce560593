// Relative position representations (Shaw, Uszkoreit and Vaswani, 2018): every pair of a
// query i and a key j gets two learned vectors chosen by their clipped distance j - i, one
// added to the key inside the score and one added to the value inside the output.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "chapters/01-attention/positional_encoding.hpp"

namespace pe {

/// index[i, j] = clip(p_j - p_i, -k, k) + k: the row of a table of 2k+1 vectors that the pair
/// (query i at position p_i, key j at position p_j) uses. Queries at q_positions (an offset o
/// means o .. o+Tq-1), keys at q_positions.keys(Tk) (then 0 .. Tk-1).
/// -> Indices of shape [Tq, Tk], values in 0 .. 2k.  k >= 1.
ag::Indices shaw_clipped_index(std::int64_t queries, std::int64_t keys,
                               const Positions& q_positions, std::int64_t k);

/// The key term: q [B, H, Tq, D], table [2k+1, D] -> [B, H, Tq, Tk] with
/// term[b, h, i, j] = q[b, h, i] . table[index[i, j]] (not yet scaled). Computed once per
/// table row and gathered: memory B H Tq (2k+1) beside the result, no [Tq, Tk, D] tensor.
ag::Tensor shaw_key_term(const ag::Tensor& q, const ag::Tensor& table, const ag::Indices& index);

/// The value term: weights [B, H, Tq, Tk], table [2k+1, D] -> [B, H, Tq, D] with
/// term[b, h, i] = sum_j weights[b, h, i, j] table[index[i, j]]. The weights that share a row
/// are added first, then multiplied by the table: no [Tq, Tk, D] tensor.
ag::Tensor shaw_value_term(const ag::Tensor& weights, const ag::Tensor& table,
                           const ag::Indices& index);

/// shaw_key_term as the formula reads: the pairwise tensor a_ij = table[index[i, j]], shape
/// [Tq, Tk, D], then one product per query. The same values; memory Tq Tk D. Kept to measure
/// what the pairwise tensor costs (the `pairwise` option) and to check the lean version.
ag::Tensor shaw_key_term_pairwise(const ag::Tensor& q, const ag::Tensor& table,
                                  const ag::Indices& index);
/// shaw_value_term through the pairwise tensor [Tq, Tk, D]: the same values; memory Tq Tk D.
ag::Tensor shaw_value_term_pairwise(const ag::Tensor& weights, const ag::Tensor& table,
                                    const ag::Indices& index);

/// Shaw's part in one attention layer, through the bias and values hooks: the layer's own
/// pair of tables (keys and values), each [2k+1, D] and shared by the heads of the layer.
class ShawPositions : public AttentionPositions {
 public:
  /// max_distance k >= 1, head_width D >= 1. Tables start from N(0, stddev^2). `pairwise`
  /// computes the terms through the [Tq, Tk, D] tensors (same values, for measuring).
  ShawPositions(std::int64_t max_distance, std::int64_t head_width, ag::Rng& rng,
                double stddev = 0.02, ag::Dtype dtype = ag::Dtype::f32, bool pairwise = false);
  /// scores [B, H, Tq, Tk] + shaw_key_term(q, key_table) / sqrt(D); k only gives Tk.
  ag::Tensor bias(const ag::Tensor& scores, const ag::Tensor& q, const ag::Tensor& k,
                  const Positions& q_positions) const override;
  /// out [B, H, Tq, D] + shaw_value_term(weights, value_table).
  ag::Tensor values(const ag::Tensor& out, const ag::Tensor& weights,
                    const Positions& q_positions) const override;

  std::int64_t max_distance() const { return max_distance_; }  ///< the clip distance k
  ag::Tensor key_table;                                        ///< a^K: [2k+1, D]
  ag::Tensor value_table;                                      ///< a^V: [2k+1, D]

 private:
  std::int64_t max_distance_, head_width_;
  bool pairwise_;
};

/// Shaw's encoding: nothing outside attention; each attention layer gets a ShawPositions with
/// tables of its own.
class ShawEncoding : public PositionalEncoding {
 public:
  /// max_distance k >= 1, head_width D >= 1; the layers' tables start from N(0, stddev^2).
  /// `pairwise`: the layers build the [Tq, Tk, D] tensors (same values, slower; to measure).
  ShawEncoding(std::int64_t max_distance, std::int64_t head_width, double stddev = 0.02,
               ag::Dtype dtype = ag::Dtype::f32, bool pairwise = false);
  std::string name() const override { return "shaw"; }
  /// A ShawPositions whose two tables are drawn from rng.
  std::shared_ptr<AttentionPositions> make_attention_part(ag::Rng& rng) const override;
  /// "index" [length, length] (as numbers).
  std::vector<std::pair<std::string, ag::Tensor>> inspect(std::int64_t length) const override;

  std::int64_t max_distance() const { return max_distance_; }  ///< the clip distance k
  std::int64_t head_width() const { return head_width_; }      ///< D
  bool pairwise() const { return pairwise_; }  ///< true if the terms build [Tq, Tk, D] tensors

 private:
  std::int64_t max_distance_, head_width_;
  double stddev_;
  ag::Dtype dtype_;
  bool pairwise_;
};

}  // namespace pe
