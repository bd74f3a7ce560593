// Shared by chapter 4's test files: a small model config, a small encoding by name, and
// the check that the encodings' hooks depend on positions only through j - i.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <memory>
#include <string>

#include "decoder.hpp"
#include "encoding_registry.hpp"
#include "permutation.hpp"
#include "relative_encodings.hpp"

namespace pe::ch04_test {

constexpr auto f64 = ag::Dtype::f64;

/// Width 16 in 2 heads of 8, two layers (so per-layer parameters are used by both layers).
inline DecoderConfig small_config() {
  DecoderConfig c;
  c.vocab = 7;
  c.width = 16;
  c.heads = 2;
  c.layers = 2;
  c.ffn_width = 32;
  return c;
}

inline std::shared_ptr<PositionalEncoding> make_small(
    const std::string& name, std::map<std::string, std::string> options = {}, int layers = 2,
    std::uint64_t seed = 1) {
  register_ch04_encodings();  // again is a no-op
  EncodingSpec spec;
  spec.model = small_config();
  spec.model.layers = layers;
  spec.options = std::move(options);
  spec.dtype = f64;
  ag::Rng rng(seed);
  auto encoding = make_encoding(name, spec, rng);
  // larger than the 0.02 of training, so that position terms are far from zero in checks
  ag::Rng values(seed + 7);
  for (ag::Tensor& p : encoding->parameters()) p.copy_from(ag::randn(p.shape(), values, f64, 0.5));
  return encoding;
}

/// scores + every hook's term, for queries q [B, H, Tq, D] at q_offset .. and keys k
/// [B, H, Tk, D] at 0 .. Tk-1, as attention computes them (rotate on the queries' block).
inline ag::Tensor hooked_scores(const PositionalEncoding& encoding, const ag::Tensor& q,
                                const ag::Tensor& k, std::int64_t q_offset, int layer) {
  const auto [rq, rk] = encoding.rotate(q, k, q_offset, layer);
  (void)rk;  // relative encodings leave keys alone; the tests pass keys that are not rotated
  const ag::Tensor scores =
      ag::mul(ag::matmul_transposed(rq, k), 1.0 / std::sqrt(double(q.size(3))));
  return encoding.bias(scores, rq, q_offset, layer);
}

}  // namespace pe::ch04_test
