#include "chapters/10-content-positions/content_positions.hpp"

#include "chapters/01-attention/encoding_registry.hpp"

namespace pe {

// [register]
void register_ch10_encodings() {
  register_encoding(
      {"cope",
       "10",
       "CoPE: positions counted by gates sigmoid(q . k), p_ij = g_ij + .. + g_ii, with a learned "
       "vector per integer position, interpolated",
       {"npos"},
       [](const EncodingSpec& spec, ag::Rng&) {
         // A count runs from 0 to T: the official default is the training length + 1.
         const std::int64_t npos =
             integer_option(spec, "cope", "npos", spec.max_length + 1, 2, kLargestTableOption);
         return std::make_shared<CopeEncoding>(npos, head_width_of(spec, "cope"), spec.dtype);
       }});
  register_encoding({"fox",
                     "10",
                     "forgetting gate (FoX): each token's f = sigmoid(w . x + b) per head, the "
                     "logit gains log f_(j+1) + .. + log f_i, a data-dependent ALiBi",
                     {"bias_init"},
                     [](const EncodingSpec& spec, ag::Rng&) {
                       const double bias_init = number_option(spec, "fox", "bias_init", 5.0);
                       return std::make_shared<ForgettingGateEncoding>(
                           spec.model.width, spec.model.heads, bias_init, spec.dtype);
                     }});
}
// [register]

}  // namespace pe
