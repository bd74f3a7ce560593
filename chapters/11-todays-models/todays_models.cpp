#include "chapters/11-todays-models/todays_models.hpp"

#include "chapters/01-attention/encoding_registry.hpp"
#include "chapters/11-todays-models/hf_rope_rule.hpp"

namespace pe {

// [register]
void register_ch11_encodings() {
  register_hf_rope_options();  // Hugging Face's rope types, as options of chapter 5's "rope"
}
// [register]

}  // namespace pe
