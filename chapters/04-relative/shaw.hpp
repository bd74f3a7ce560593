// Relative position representations (Shaw, Uszkoreit and Vaswani, 2018): every pair of a
// query i and a key j gets two learned vectors chosen by their clipped distance j - i, one
// added to the key inside the score and one added to the value inside the output.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "positional_encoding.hpp"

namespace pe {

/// index[i, j] = clip(j - (q_offset + i), -k, k) + k: the row of a table of 2k+1 vectors that
/// the pair (query q_offset+i, key j) uses. Queries at q_offset .. q_offset+Tq-1, keys at
/// 0 .. Tk-1.  -> Indices of shape [Tq, Tk], values in 0 .. 2k.  k >= 1.
ag::Indices shaw_clipped_index(std::int64_t queries, std::int64_t keys, std::int64_t q_offset,
                               std::int64_t k);

/// The key term: q [B, H, Tq, D], table [2k+1, D] -> [B, H, Tq, Tk] with
/// term[b, h, i, j] = q[b, h, i] . table[index[i, j]] (not yet scaled).
ag::Tensor shaw_key_term(const ag::Tensor& q, const ag::Tensor& table, const ag::Indices& index);

/// The value term: weights [B, H, Tq, Tk], table [2k+1, D] -> [B, H, Tq, D] with
/// term[b, h, i] = sum_j weights[b, h, i, j] table[index[i, j]].
ag::Tensor shaw_value_term(const ag::Tensor& weights, const ag::Tensor& table,
                           const ag::Indices& index);

/// Shaw's encoding through the bias and values hooks: one pair of tables (keys and values)
/// per layer, each [2k+1, D] and shared by the heads of that layer.
class ShawEncoding : public PositionalEncoding {
 public:
  /// max_distance k >= 1, head_width D >= 1, layers >= 1. Tables start from N(0, stddev^2).
  ShawEncoding(std::int64_t max_distance, std::int64_t head_width, std::int64_t layers,
               ag::Rng& rng, double stddev = 0.02, ag::Dtype dtype = ag::Dtype::f32);
  std::string name() const override { return "shaw"; }
  /// scores [B, H, Tq, Tk] + shaw_key_term(q, key table of `layer`) / sqrt(D).
  ag::Tensor bias(const ag::Tensor& scores, const ag::Tensor& q, std::int64_t q_offset,
                  int layer) const override;
  /// out [B, H, Tq, D] + shaw_value_term(weights, value table of `layer`).
  ag::Tensor values(const ag::Tensor& out, const ag::Tensor& weights, std::int64_t q_offset,
                    int layer) const override;
  /// "index" [length, length] (as numbers), "key_table" and "value_table" [2k+1, D] of layer 0.
  std::vector<std::pair<std::string, ag::Tensor>> inspect(std::int64_t length) const override;

  std::int64_t max_distance() const { return max_distance_; }
  std::int64_t head_width() const { return head_width_; }
  std::vector<ag::Tensor> key_tables, value_tables;  ///< a^K and a^V, one of each per layer

 private:
  const ag::Tensor& table_of(const std::vector<ag::Tensor>& tables, int layer) const;
  std::int64_t max_distance_, head_width_;
};

}  // namespace pe
