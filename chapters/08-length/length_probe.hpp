// Chapter 7's linear probe of position, asked past the training length: how well each layer
// of a model still tells positions apart within each band of positions of a long sequence.
#pragma once
#include <cstdint>
#include <vector>

#include "chapters/01-attention/decoder.hpp"
#include "chapters/07-nope/probe.hpp"

namespace pe {

/// One probe per layer (layer_states: 0 is the embedding), fitted on 32 windows of `length`
/// tokens cut back to back from `tokens`, scored on the next 16 windows. The score is given
/// for each band of `band` positions (0 .. band-1, band .. 2 band-1, ...): R^2 within a band
/// compares the probe's error with the spread of the positions in that band, so 1 means the
/// layer still resolves positions there and 0 or less means it does not. length must be a
/// multiple of band. Returns [layer][band].
std::vector<std::vector<ProbeScore>> probe_position_bands(Decoder& model,
                                                          const std::vector<std::int64_t>& tokens,
                                                          std::int64_t length, std::int64_t band);

}  // namespace pe
