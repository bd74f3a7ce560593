// Chapter 10's live figure: CoPE's positions and the forgetting gate's bias over a sequence the
// reader types, one token per character, with the gates the reader sets by character. Every
// number comes from chapter 10's own cope_gates, cope_positions, forgetting_sums and
// forgetting_bias (one head, in double), and the references from the encodings' own inspect():
// CoPE with every gate open (the token distance, counted inclusively) and the gate with one f
// at every token (ALiBi's straight line, slope -log f).
#pragma once
#include <nlohmann/json_fwd.hpp>

namespace pe::live {

/// request {"text": 1 .. 32 printable ASCII characters (one token each),
///          "chosen": the characters whose gates the reader sets (a letter matches either case),
///          "sharpness": s in [0, 50]: CoPE's score q_i . k_j / sqrt(D) is +s for every query on a
///                       chosen key and -s on another, so its gates are sigmoid(+s) and
///                       sigmoid(-s),
///          "f_chosen", "f_other": the forgetting gate's f on a chosen token and on the others,
///                       each strictly between 0 and 1}
/// -> {"length": T, "tokens": [T one-character strings], "chosen": [T booleans],
///     "cope": {"gates": [T] (each key's gate), "positions": [T*T] p_ij row-major (query i, key
///              j; 0 after the query), "count": [T*T] p_ij with every gate open (i - j + 1)},
///     "fox": {"log_f": [T], "sums": [T] (c_i), "bias": [T*T] D_ij = c_i - c_j (the causal mask
///             hides j > i)},
///     "alibi": {"bias_init": b = log(f_other / (1 - f_other)), "slope": -log sigmoid(b),
///               "bias": [T*T] (ForgettingGateEncoding::inspect with that b: f_other everywhere)}}.
nlohmann::json content_gates(const nlohmann::json& request);

}  // namespace pe::live
