// Learned absolute positional embeddings (BERT, GPT-2): a trainable table with one row per
// position, added to the token embeddings.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "chapters/01-attention/positional_encoding.hpp"

namespace pe {

/// A parameter "table" [max_len, C], initialised N(0, 0.02^2) (Hugging Face's GPT-2 init;
/// OpenAI's GPT-2 code draws its position table with 0.01), through the embed hook.
/// Positions at or past max_len are an ag::Error naming both numbers.
class LearnedEncoding : public PositionalEncoding {
 public:
  /// \param max_len the table's rows: the longest sequence it can encode  \param width C
  /// \param rng the initial values' draws  \param stddev of the initial values
  /// \param dtype the table's element type
  LearnedEncoding(std::int64_t max_len, std::int64_t width, ag::Rng& rng, double stddev = 0.02,
                  ag::Dtype dtype = ag::Dtype::f32);
  std::string name() const override { return "learned"; }
  /// x [B, T, C] at `positions` -> x + the table's rows at the positions (offset ..
  /// offset+T-1 for contiguous ones)
  ag::Tensor embed(const ag::Tensor& x, const Positions& positions) const override;
  /// "table": rows 0 .. length-1 (length <= max_len).
  std::vector<std::pair<std::string, ag::Tensor>> inspect(std::int64_t length) const override;

  std::int64_t max_len() const { return max_len_; }  ///< the table's rows
  ag::Tensor table;                                  ///< [max_len, C]

 private:
  std::int64_t max_len_, width_;
};

/// Adds "learned" (option max_len) to the encoding registry.
void register_ch03_encodings();

}  // namespace pe
