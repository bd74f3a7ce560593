// Left padding: a batch of prompts of different lengths, right-aligned so that every row's
// next token is decoded in the same column, each row at its own positions (Hugging Face's
// position_ids = cumsum(attention_mask) - 1). The decoder's RowStarts (chapter 1) runs such a
// batch so that each row gets exactly the logits it has alone.
#pragma once
#include <cstdint>
#include <vector>

#include "chapters/01-attention/decoder.hpp"

namespace pe {

/// A left-padded batch: ids [B, T] with T the longest sequence, row b holding T - n_b pad ids
/// and then its n_b tokens, and its row starts for the prefill (first(b) = -(T - n_b)).
struct PaddedBatch {
  ag::Indices ids;                    ///< [B, T], the padding first
  RowStarts starts{{}};               ///< row b's first position: minus its padding
  std::vector<std::int64_t> lengths;  ///< n_b, each row's real tokens
};

/// The padded batch of `sequences` with `pad_id` in the padding columns. An empty list, an
/// empty sequence or a negative pad id is an ag::Error.
PaddedBatch left_pad(const std::vector<std::vector<std::int64_t>>& sequences, std::int64_t pad_id);

/// What padded_greedy_decode saw and chose.
struct PaddedDecoding {
  ag::Tensor prefill;                             ///< [B, T, V]: the prompt's logits
  std::vector<ag::Tensor> steps;                  ///< per decoded token, [B, 1, V]
  std::vector<std::vector<std::int64_t>> tokens;  ///< per row, the greedy tokens chosen
};

/// Prefills `batch` into a fresh KVCache and decodes `steps` greedy tokens per row, each
/// fed back at the row's own next position (cached columns minus its padding). Logits of
/// padding columns are meaningless; every other logit is the row's own. steps >= 0.
PaddedDecoding padded_greedy_decode(Decoder& model, const PaddedBatch& batch, std::int64_t steps);

}  // namespace pe
