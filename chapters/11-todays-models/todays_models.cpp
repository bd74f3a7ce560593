#include "chapters/11-todays-models/todays_models.hpp"

#include "chapters/01-attention/encoding_registry.hpp"
#include "chapters/11-todays-models/layer_types.hpp"

namespace pe {

// [register]
void register_ch11_encodings() {
  register_hybrid_encoding();  // layer_types.hpp: local, global, chunked and NoPE layers
}
// [register]

}  // namespace pe
