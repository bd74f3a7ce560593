// What a bias encoding adds to a score as a function of the distance: b(d) for d = 0 .. T-1,
// read from one attention layer's part through its own bias hook, so that the same code
// reads ALiBi, T5, KERPLE, FIRE and the dynamic position bias, trained or not.
#pragma once
#include <cstdint>
#include <vector>

#include "chapters/01-attention/decoder.hpp"

namespace pe {

/// b[h][d]: what layer `layer`'s bias hook adds to the score of the query at position
/// length-1 and the key d positions behind it, for every head h and d = 0 .. length-1.
/// (FIRE's bias also depends on the query's position: this is its curve at length-1.)
/// An encoding whose bias reads q or k is read with q = k = 0.
std::vector<std::vector<double>> bias_against_distance(const Decoder& model, std::int64_t layer,
                                                       std::int64_t length);

}  // namespace pe
