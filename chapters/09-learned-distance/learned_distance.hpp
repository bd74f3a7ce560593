// Chapter 9's encodings, registered under "kerple", "fire", "dpb" and "xpos".
#pragma once
#include "chapters/09-learned-distance/dynamic_position_bias.hpp"
#include "chapters/09-learned-distance/fire.hpp"
#include "chapters/09-learned-distance/kerple.hpp"
#include "chapters/09-learned-distance/xpos.hpp"

namespace pe {

/// Adds "kerple" (options form, shared), "fire" (width, c, threshold, transform, shared),
/// "dpb" (width, depth, log_distance, shared) and "xpos" (base, gamma, scale_base) to the
/// encoding registry.
void register_ch09_encodings();

}  // namespace pe
