// T5's relative attention bias (Raffel et al., 2020): the distance between a query and a key
// is put into one of a few buckets (exact for near distances, logarithmic for far ones), and
// each head adds a learned scalar per bucket to the score.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "chapters/01-attention/positional_encoding.hpp"

namespace pe {

/// How T5 maps a distance to a bucket.
struct T5BucketOptions {
  std::int64_t buckets = 32;        ///< the number of buckets
  std::int64_t max_distance = 128;  ///< distances from here on share the last bucket
  bool bidirectional = false;       ///< our decoder is causal: only keys behind the query matter
};

/// Throws ag::Error unless the options make a bucket function: buckets >= 2 (even and >= 4
/// when bidirectional, so that each side keeps at least one exact bucket) and max_distance
/// greater than the number of exact buckets.
void check_t5_options(const T5BucketOptions& options);

/// T5's relative_position_bucket for relative_position = key position - query position.
/// Bidirectional: the upper half of the buckets for keys after the query, n = |rel|.
/// Causal: n = max(-rel, 0), so every future key falls into bucket 0 with distance 0.
/// Of the buckets of one side, n < max_exact = side/2 is its own bucket; larger n go to
/// max_exact + floor(log(n / max_exact) / log(max_distance / max_exact) * (side - max_exact)),
/// clamped to the side's last bucket.
std::int64_t t5_bucket(std::int64_t relative_position, const T5BucketOptions& options);

/// buckets[i, j] = t5_bucket(p_j - p_i) for queries at positions p_i of q_positions (an
/// offset o means o .. o+Tq-1) and keys at p_j of q_positions.keys(Tk) (then 0 .. Tk-1).
/// -> Indices [Tq, Tk]
ag::Indices t5_bucket_matrix(std::int64_t queries, std::int64_t keys, const Positions& q_positions,
                             const T5BucketOptions& options);

/// bias[h, i, j] = table[buckets[i, j], h]: table [buckets, H] -> [H, Tq, Tk].
ag::Tensor t5_bias(const ag::Tensor& table, const ag::Indices& buckets);

/// T5's part in one attention layer, through the bias hook: a handle to the encoding's table,
/// which every layer shares.
class T5Positions : public AttentionPositions {
 public:
  /// table [buckets, H]: the encoding's parameter (registered there, not here).
  T5Positions(ag::Tensor table, T5BucketOptions options);
  /// scores [B, H, Tq, Tk] + t5_bias (broadcast over the batch); q and k are not used.
  ag::Tensor bias(const ag::Tensor& scores, const ag::Tensor& q, const ag::Tensor& k,
                  const Positions& q_positions) const override;

  ag::Tensor table;  ///< [buckets, H], shared with the encoding

 private:
  T5BucketOptions options_;
};

/// T5's bias: one table [buckets, H], shared by every layer, whose T5Positions use it.
class T5Encoding : public PositionalEncoding {
 public:
  /// \param heads H  \param options the buckets  \param rng the table's initial draws
  /// \param stddev of the initial values  \param dtype the table's element type
  T5Encoding(std::int64_t heads, T5BucketOptions options, ag::Rng& rng, double stddev = 0.02,
             ag::Dtype dtype = ag::Dtype::f32);
  std::string name() const override { return "t5"; }
  /// A T5Positions holding the table.
  std::shared_ptr<AttentionPositions> make_attention_part(ag::Rng& rng) const override;
  /// "buckets" [length, length] (as numbers) and "bias" [H, length, length].
  std::vector<std::pair<std::string, ag::Tensor>> inspect(std::int64_t length) const override;

  const T5BucketOptions& options() const { return options_; }  ///< as constructed
  ag::Tensor table;  ///< [buckets, H]: one learned scalar per bucket and head

 private:
  T5BucketOptions options_;
};

}  // namespace pe
