// Chapter 5's live figure: a query and a key, both turned by RoPE (through the attention
// part the encoding gives a layer, as the model uses it), and their score at every offset
// from several absolute positions: the curves lie on each other, because the score depends
// on the offset alone. Chapter 8's scaling rules are options of the same encoding.
#pragma once
#include <nlohmann/json_fwd.hpp>

namespace pe::live {

/// request {"dim": D (a head's width), "length": L (offsets 0 .. L-1), "starts": [key
/// positions m], "options": RoPE's options (base, scaling, scale, train_length, ...), "seed":
/// n} -> {"offsets": [0 .. L-1], "scores": [one row per start: q at m + r . k at m, over
/// sqrt(D)]}. q and k are drawn once from the seed (standard normal), the same for every
/// start.
nlohmann::json rope_scores(const nlohmann::json& request);

}  // namespace pe::live
