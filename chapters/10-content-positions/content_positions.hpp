// Chapter 10's encodings, registered under "cope" and "fox".
#pragma once
#include "chapters/10-content-positions/cope.hpp"
#include "chapters/10-content-positions/forgetting_gate.hpp"

namespace pe {

/// Adds "cope" (option npos) and "fox" (option bias_init) to the encoding registry.
void register_ch10_encodings();

}  // namespace pe
