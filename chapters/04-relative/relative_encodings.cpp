#include "chapters/04-relative/relative_encodings.hpp"

#include "chapters/01-attention/encoding_registry.hpp"

namespace pe {

// [register]
void register_ch04_encodings() {
  register_encoding({"shaw",
                     "04",
                     "Shaw et al.: learned vectors of the clipped distance j - i, added to keys "
                     "(in the scores) and to values",
                     {"max_distance", "pairwise"},
                     [](const EncodingSpec& spec, ag::Rng&) {
                       const std::int64_t k =
                           integer_option(spec, "shaw", "max_distance", 16, 1, kLargestTableOption);
                       // the [T, T, D] tensors of the formula as written: to measure their cost
                       const bool pairwise = bool_option(spec, "shaw", "pairwise", false);
                       return std::make_shared<ShawEncoding>(k, head_width_of(spec, "shaw"), 0.02,
                                                             spec.dtype, pairwise);
                     }});
  register_encoding({"xl",
                     "04",
                     "Transformer-XL: (q + u) . k + (q + v) . W_R R_{i-j}, R a fixed sinusoid of "
                     "the distance",
                     {},
                     [](const EncodingSpec& spec, ag::Rng& rng) {
                       head_width_of(spec, "xl");
                       return std::make_shared<TransformerXLEncoding>(
                           spec.model.width, spec.model.heads, rng, spec.dtype);
                     }});
  register_encoding(
      {"t5",
       "04",
       "T5: a learned scalar per (distance bucket, head), log-spaced buckets, "
       "shared by all layers",
       {"buckets", "max_distance", "bidirectional"},
       [](const EncodingSpec& spec, ag::Rng& rng) {
         T5BucketOptions options;
         options.buckets =
             integer_option(spec, "t5", "buckets", options.buckets, 2, kLargestTableOption);
         options.max_distance = integer_option(spec, "t5", "max_distance", options.max_distance, 1,
                                               kLargestTableOption);
         options.bidirectional = bool_option(spec, "t5", "bidirectional", false);
         return std::make_shared<T5Encoding>(spec.model.heads, options, rng, 0.02, spec.dtype);
       }});
}
// [register]

}  // namespace pe
