// Chapter 4's three relative encodings, registered under "shaw", "xl" and "t5".
#pragma once
#include "chapters/04-relative/shaw.hpp"
#include "chapters/04-relative/t5_bias.hpp"
#include "chapters/04-relative/transformer_xl.hpp"

namespace pe {

/// Adds "shaw" (option max_distance), "xl" (no options) and "t5" (options buckets,
/// max_distance, bidirectional) to the encoding registry.
void register_ch04_encodings();

}  // namespace pe
