// The check every encoding chapter runs: a float64 gradient check of a one-block decoder
// that uses the encoding (the encoding's own parameters, if any, are checked with it).
#pragma once
#include <memory>

#include "ag/gradcheck.hpp"
#include "decoder.hpp"

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

}  // namespace pe
