// Reading a trained model's content positions: the gates CoPE opens in a layer and the share
// each token keeps under the forgetting gate, for a batch of tokens, and their means by token,
// so that the chapter can say which tokens a head counts and which make it forget.
#pragma once
#include <cstdint>
#include <vector>

#include "chapters/01-attention/decoder.hpp"

namespace pe {

/// The input of block `layer`'s attention for ids [B, T] at positions 0 .. T-1: the
/// embedding, the earlier blocks, then the block's LayerNorm.  -> [B, T, C]
ag::Tensor attention_input(Decoder& model, const ag::Indices& ids, std::int64_t layer);

/// CoPE's gates g_ij in block `layer` (its part must be a CopePositions).  -> [B, H, T, T]
ag::Tensor cope_gates_of(Decoder& model, const ag::Indices& ids, std::int64_t layer);

/// The forgetting gate's log f_t in block `layer` (its part must be a ForgettingGatePositions).
/// -> [B, H, T]
ag::Tensor forget_logs_of(Decoder& model, const ag::Indices& ids, std::int64_t layer);

/// means[h][v]: the mean of CoPE's gates g_ij of head h over the pairs j <= i whose key token
/// ids[b, j] is v (NaN for a token that never occurs). gates [B, H, T, T], vocabulary V.
std::vector<std::vector<double>> mean_gate_by_key_token(const ag::Tensor& gates,
                                                        const ag::Indices& ids, std::int64_t vocab);

/// means[h][v]: the mean of f_t = exp(log f_t) of head h over the tokens whose id is v (NaN for a
/// token that never occurs). log_f [B, H, T], vocabulary V.
std::vector<std::vector<double>> mean_keep_by_token(const ag::Tensor& log_f, const ag::Indices& ids,
                                                    std::int64_t vocab);

}  // namespace pe
