#include "chapters/09-learned-distance/learned_distance.hpp"

#include "chapters/01-attention/encoding_registry.hpp"

namespace pe {

namespace {

// The text of a named choice ("form", "transform"), or the fallback when it is absent.
std::string choice_option(const EncodingSpec& spec, const char* key, const std::string& fallback) {
  const auto it = spec.options.find(key);
  return it == spec.options.end() ? fallback : it->second;
}

// FIRE's and the dynamic bias's widths: a bound against typing mistakes that keeps the
// [Tq * Tk, width] activations of a training step small.
constexpr std::int64_t kLargestMlpWidth = 4096;

}  // namespace

// [register]
void register_ch09_encodings() {
  register_encoding(
      {"kerple",
       "09",
       "KERPLE: -r1 log(1 + r2 d) or -r1 d^r2, two learned positive numbers per head, shared "
       "by all layers",
       {"form", "shared"},
       [](const EncodingSpec& spec, ag::Rng& rng) {
         const KerpleForm form = kerple_form_from(choice_option(spec, "form", "log"));
         const bool shared = bool_option(spec, "kerple", "shared", true);
         return std::make_shared<KerpleEncoding>(spec.model.heads, form, shared, rng, spec.dtype);
       }});
  register_encoding(
      {"fire",
       "09",
       "FIRE: an MLP of log(1 + c d) / log(1 + c max(L, i)), its input in [0, 1] at any "
       "length; c, L and the MLP learned, one per layer",
       {"width", "c", "threshold", "transform", "shared"},
       [](const EncodingSpec& spec, ag::Rng& rng) {
         FireOptions options;
         options.width = integer_option(spec, "fire", "width", options.width, 1, kLargestMlpWidth);
         options.c = number_option(spec, "fire", "c", options.c);
         options.threshold = number_option(spec, "fire", "threshold", options.threshold);
         options.transform = fire_transform_from(choice_option(spec, "transform", "log"));
         options.shared = bool_option(spec, "fire", "shared", options.shared);
         return std::make_shared<FireEncoding>(spec.model.heads, options, rng, spec.dtype);
       }});
  register_encoding(
      {"dpb",
       "09",
       "dynamic position bias (x-transformers): an MLP of the distance d (or log(1 + d)), "
       "shared by all layers",
       {"width", "depth", "log_distance", "shared"},
       [](const EncodingSpec& spec, ag::Rng& rng) {
         DynamicBiasOptions options;
         options.width = integer_option(spec, "dpb", "width", 0, 1, kLargestMlpWidth);
         options.depth = integer_option(spec, "dpb", "depth", options.depth, 1, 64);
         options.log_distance = bool_option(spec, "dpb", "log_distance", options.log_distance);
         options.shared = bool_option(spec, "dpb", "shared", options.shared);
         return std::make_shared<DynamicBiasEncoding>(spec.model.width, spec.model.heads, options,
                                                      rng, spec.dtype);
       }});
  register_encoding({"xpos",
                     "09",
                     "xPos: RoPE whose planes also decay, q by zeta_i^(m/B) and k by zeta_i^(-n/B)",
                     {"base", "gamma", "scale_base"},
                     [](const EncodingSpec& spec, ag::Rng&) {
                       XposOptions options;
                       options.base = number_option(spec, "xpos", "base", options.base);
                       options.gamma = number_option(spec, "xpos", "gamma", options.gamma);
                       options.scale_base =
                           number_option(spec, "xpos", "scale_base", options.scale_base);
                       return std::make_shared<XposEncoding>(head_width_of(spec, "xpos"), options);
                     }});
}
// [register]

}  // namespace pe
