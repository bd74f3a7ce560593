// The checks every encoding chapter runs: a float64 gradient check of a one-block decoder
// that uses the encoding (the encoding's own parameters, if any, are checked with it), and
// decoding with a key/value cache against the full pass.
#pragma once
#include <algorithm>
#include <memory>

#include "ag/gradcheck.hpp"
#include "decoder.hpp"
#include "permutation.hpp"

namespace pe {

/// A decoder small enough for a full gradient check: vocabulary 7, width 8, 2 heads, one
/// block, feed-forward 16.
inline DecoderConfig tiny_decoder_config() {
  DecoderConfig c;
  c.vocab = 7;
  c.width = 8;
  c.heads = 2;
  c.layers = 1;
  c.ffn_width = 16;
  return c;
}

/// Builds a tiny one-block decoder around `encoding`, converts it to float64 and checks the
/// gradients of its logits for two sequences of three tokens w.r.t. every parameter.
inline ag::GradcheckResult gradcheck_one_block(std::shared_ptr<PositionalEncoding> encoding,
                                               ag::Rng& rng) {
  Decoder model(tiny_decoder_config(), std::move(encoding), rng);
  model.to(ag::Dtype::f64);
  const ag::Indices ids{{1, 4, 2, 6, 0, 3}, {2, 3}};
  return ag::gradcheck([&](const std::vector<ag::Tensor>&) { return model.forward(ids); },
                       model.parameters());
}

/// How far cached decoding strays from the full pass: the largest |difference| between the
/// logits of a full pass over two sequences of six tokens and those of the same model fed
/// one token at a time (one_by_one), or 4 tokens and then 2 at offset 4 (chunks), with a
/// KVCache. The model must have vocabulary > 6; in float64 both should be rounding, because
/// every hook receives the same absolute positions either way.
struct CachedDecodingDifference {
  double one_by_one = 0, chunks = 0;
};

inline CachedDecodingDifference cached_decoding_difference(Decoder& model) {
  const ag::Indices ids{{1, 4, 2, 6, 0, 3, 5, 1, 2, 3, 4, 0}, {2, 6}};
  ag::NoGradGuard no_grad;
  const ag::Tensor full = model.forward(ids);
  CachedDecodingDifference result;
  KVCache cache;
  for (std::int64_t t = 0; t < 6; ++t) {
    const ag::Tensor logits = model.forward({{ids.values[t], ids.values[6 + t]}, {2, 1}}, t, &cache);
    result.one_by_one =
        std::max(result.one_by_one, max_abs_difference(logits, ag::slice(full, 1, t, t + 1)));
  }
  KVCache chunks;
  const ag::Tensor first = model.forward({{1, 4, 2, 6, 5, 1, 2, 3}, {2, 4}}, 0, &chunks);
  const ag::Tensor rest = model.forward({{0, 3, 4, 0}, {2, 2}}, 4, &chunks);
  result.chunks = max_abs_difference(ag::concat({first, rest}, 1), full);
  return result;
}

}  // namespace pe
