// Reading position out of a decoder: the hidden states of every layer of a model, turned into
// probe data whose target is each token's position, and a linear probe per layer.
#pragma once
#include <cstdint>
#include <vector>

#include "chapters/01-attention/decoder.hpp"
#include "chapters/07-nope/probe.hpp"

namespace pe {

/// What a probe can read at each depth of the model, without gradients: index 0 is the
/// embedding output (the token vectors after the encoding's embed hook; with NoPE, the token
/// vectors alone), index l the output of block l. layers + 1 tensors [B, T, C].
std::vector<ag::Tensor> layer_states(Decoder& model, const ag::Indices& ids);

/// states [B, T, C] -> B * T samples of C features; the target of the token at position t is
/// t (0 .. T-1).
ProbeData position_data(const ag::Tensor& states);

/// One probe per entry of layer_states: fitted on the states of fit_ids, scored on those of
/// test_ids (other sequences, same length). Returns layers + 1 scores, index 0 the embedding.
std::vector<ProbeScore> probe_positions(Decoder& model, const ag::Indices& fit_ids,
                                        const ag::Indices& test_ids, double ridge);

}  // namespace pe
