// Chapter 9's live figure: the bias each learned distance function adds to a score, against
// the distance d = i - j, from chapter 9's own KerpleBias, FireBias and DynamicPositionBias
// (and chapter 6's alibi_bias for reference), one head each, in double.
#pragma once
#include <nlohmann/json_fwd.hpp>

namespace pe::live {

/// request {"distances": N (1 .. 1024: d = 0 .. N-1),
///          "kerple": {"form": "log" or "power", "r1", "r2"} (KerpleBias::set's ranges),
///          "fire": {"c", "threshold" (L), "query" (i, 0 .. 4096), "f": "linear" or "initial",
///                   "seed"},
///          "dpb": {"log_distance", "seed"},
///          "alibi": {"heads" (H, 1 .. 64), "head" (h, 1 .. H)}}
/// -> {"distance": [0 .. N-1], "kerple": [b(d)], "dpb": [b(d)], "alibi": [b(d)], "alibi_slope",
///     "fire": {"distance": [0 .. min(i, N-1)], "input": [u(d)], "bias": [b(d)]}}.
/// KERPLE, the dynamic bias and ALiBi are read on the last query's row (position N-1), FIRE on
/// query i's (its input depends on i). FIRE's f is "linear": f(u) = -4u (Linear(1, 1) with
/// weight 1, ReLU, which passes u >= 0, Linear(1, 1) with weight -4), or "initial": the paper's
/// Linear(1, 32), ReLU, Linear(32, 1) at the weights drawn from the seed; the dynamic bias is
/// x-transformers' (depth 2, width 16 = 64 / 4) at its initial weights from the seed.
nlohmann::json distance_biases(const nlohmann::json& request);

}  // namespace pe::live
