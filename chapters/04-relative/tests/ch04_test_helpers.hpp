// Shared by chapter 4's test files: encodings and attention parts for the small test decoder,
// and the scores as attention computes them.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "chapters/01-attention/decoder.hpp"
#include "chapters/01-attention/encoding_registry.hpp"
#include "chapters/01-attention/permutation.hpp"
#include "chapters/01-attention/tests/model_check.hpp"
#include "chapters/04-relative/relative_encodings.hpp"

namespace pe::ch04_test {

constexpr auto f64 = ag::Dtype::f64;

/// Redraws every parameter of `module` from N(0, 0.5^2): larger than the 0.02 of training, so
/// that position terms are far from zero in checks.
inline void spread(ag::Module& module, std::uint64_t seed) {
  ag::Rng values(seed);
  for (ag::Tensor& p : module.parameters()) p.copy_from(ag::randn(p.shape(), values, f64, 0.5));
}

/// A registered encoding for the small test decoder (width 16 in 2 heads of 8), in float64,
/// its own parameters spread.
inline std::shared_ptr<PositionalEncoding> make_small(
    const std::string& name, std::map<std::string, std::string> options = {}) {
  register_ch04_encodings();  // again is a no-op
  EncodingSpec spec;
  spec.model = small_decoder_config();
  spec.options = std::move(options);
  spec.dtype = f64;
  ag::Rng rng(1);
  auto encoding = make_encoding(name, spec, rng);
  spread(*encoding, 8);
  return encoding;
}

/// The encoding's parts for the two layers of the small decoder, as the decoder asks for
/// them, their own parameters spread.
inline std::vector<std::shared_ptr<AttentionPositions>> make_parts(
    const PositionalEncoding& encoding) {
  ag::Rng rng(2);
  std::vector<std::shared_ptr<AttentionPositions>> parts;
  for (std::uint64_t layer = 0; layer < 2; ++layer) {
    parts.push_back(encoding.make_attention_part(rng));
    spread(*parts.back(), 20 + layer);
  }
  return parts;
}

/// The scores of queries q [B, H, Tq, D] at q_offset .. q_offset+Tq-1 and keys k [B, H, Tk, D]
/// at 0 .. Tk-1 as attention computes them for an encoding that does not rotate (none of this
/// chapter's does): q . k / sqrt(D), then the part's bias hook.
inline ag::Tensor hooked_scores(const AttentionPositions& part, const ag::Tensor& q,
                                const ag::Tensor& k, std::int64_t q_offset) {
  const ag::Tensor scores =
      ag::mul(ag::matmul_transposed(q, k), 1.0 / std::sqrt(double(q.size(3))));
  return part.bias(scores, q, k, q_offset);
}

}  // namespace pe::ch04_test
