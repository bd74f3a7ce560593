#include "chapters/01-attention/tests/model_check.hpp"

#include <algorithm>
#include <utility>

#include "chapters/01-attention/permutation.hpp"

namespace pe {

DecoderConfig small_decoder_config() {
  DecoderConfig c;
  c.vocab = 9;
  c.width = 16;
  c.heads = 2;
  c.layers = 2;
  c.ffn_width = 32;
  return c;
}

ag::GradcheckResult gradcheck_one_block(std::shared_ptr<PositionalEncoding> encoding,
                                        ag::Rng& rng) {
  DecoderConfig config = small_decoder_config();
  config.layers = 1;
  Decoder model(config, std::move(encoding), rng);
  model.to(ag::Dtype::f64);
  const ag::Indices ids{{1, 4, 2, 6, 0, 3}, {2, 3}};
  return ag::gradcheck([&](const std::vector<ag::Tensor>&) { return model.forward(ids); },
                       model.parameters());
}

CachedDecodingDifference cached_decoding_difference(Decoder& model) {
  const ag::Indices ids{{1, 4, 2, 6, 0, 3, 5, 1, 2, 3, 4, 0}, {2, 6}};
  ag::NoGradGuard no_grad;
  const ag::Tensor full = model.forward(ids);
  CachedDecodingDifference result;
  KVCache cache;
  for (std::int64_t t = 0; t < 6; ++t) {
    const ag::Tensor logits =
        model.forward({{ids.values[t], ids.values[6 + t]}, {2, 1}}, t, &cache);
    result.one_by_one =
        std::max(result.one_by_one, max_abs_difference(logits, ag::slice(full, 1, t, t + 1)));
  }
  KVCache chunks;
  const ag::Tensor first = model.forward({{1, 4, 2, 6, 5, 1, 2, 3}, {2, 4}}, 0, &chunks);
  const ag::Tensor rest = model.forward({{0, 3, 4, 0}, {2, 2}}, 4, &chunks);
  result.chunks = max_abs_difference(ag::concat({first, rest}, 1), full);
  return result;
}

}  // namespace pe
