// Chapter 1's live figure: an untrained decoder without positions reads a sentence and the
// same words in another order; without the causal mask its outputs are the same vectors,
// reordered, and with the mask they are not (chapter 1's experiment, one sentence at a time).
#pragma once
#include <nlohmann/json_fwd.hpp>

namespace pe::live {

/// request {"words": [ids < vocab], "order": [a permutation of 0 .. T-1], "causal": bool,
/// "seed": n, "vocab": V} -> {"shuffled": [words[order[i]]], "original" [T][C] and
/// "permuted" [T][C] (the last block's hidden states of each sentence), "reordered" [T][C]
/// (the original's rows in the new order), "max_difference" (between permuted and
/// reordered), "scale" (the largest |h|)}. The model is chapter 1's reference decoder
/// (width 256, one head) with no encoding, its weights drawn from the seed.
nlohmann::json permutation_outputs(const nlohmann::json& request);

}  // namespace pe::live
