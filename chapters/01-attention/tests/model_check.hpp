// What every chapter's tests share: the small test decoder, a float64 gradient check of it
// with one block around an encoding (the encoding's parameters and its attention part's are
// checked with it), and decoding with a key/value cache against the full pass.
#pragma once
#include <memory>

#include "ag/gradcheck.hpp"
#include "chapters/01-attention/decoder.hpp"

namespace pe {

/// The small decoder of the tests: vocabulary 9, width 16 in 2 heads of 8, two blocks (so
/// that each layer's part of an encoding is used), feed-forward 32, causal. A test that
/// needs another shape changes one field of it.
DecoderConfig small_decoder_config();

/// Builds the small decoder with one block around `encoding`, converts it to float64 and
/// checks the gradients of its logits for two sequences of three tokens w.r.t. every
/// parameter.
ag::GradcheckResult gradcheck_one_block(std::shared_ptr<PositionalEncoding> encoding, ag::Rng& rng);

/// How far cached decoding strays from the full pass: the largest |difference| between the
/// logits of a full pass over two sequences of six tokens and those of the same model fed
/// one token at a time (one_by_one), or 4 tokens and then 2 at offset 4 (chunks), with a
/// KVCache. The model must have vocabulary > 6; in float64 both should be rounding, because
/// every hook receives the same absolute positions either way.
struct CachedDecodingDifference {
  double one_by_one = 0, chunks = 0;
};

CachedDecodingDifference cached_decoding_difference(Decoder& model);

}  // namespace pe
