#include "chapters/12-inference/cache_memory.hpp"

#include <iomanip>
#include <sstream>
#include <utility>

#include "chapters/05-rope/rope.hpp"

namespace pe {

std::int64_t mha_cache_elements(std::int64_t layers, std::int64_t heads, std::int64_t head_width) {
  return gqa_cache_elements(layers, heads, head_width);
}

// [cache-formulas]
std::int64_t gqa_cache_elements(std::int64_t layers, std::int64_t kv_heads,
                                std::int64_t head_width) {
  ag::check(layers > 0 && kv_heads > 0 && head_width > 0, "gqa_cache_elements",
            "layers, key/value heads and head width must be positive, got ", layers, ", ", kv_heads,
            " and ", head_width);
  return 2 * layers * kv_heads * head_width;  // a key and a value per key/value head
}

std::int64_t latent_cache_elements(std::int64_t layers, std::int64_t latent_width,
                                   std::int64_t rotary_width) {
  ag::check(layers > 0 && latent_width > 0 && rotary_width > 0, "latent_cache_elements",
            "layers, d_c and d_R must be positive, got ", layers, ", ", latent_width, " and ",
            rotary_width);
  return layers * (latent_width + rotary_width);  // one latent and one shared rotary key
}
// [cache-formulas]

namespace {

std::int64_t element_size(const ag::Tensor& t) { return t.dtype() == ag::Dtype::f64 ? 8 : 4; }

std::int64_t bytes_of(const ag::Tensor& t) { return t.defined() ? t.numel() * element_size(t) : 0; }

void check_tokens(std::int64_t tokens, std::int64_t cached, const char* who) {
  ag::check(tokens > 0 && tokens == cached, who, "the cache holds ", cached,
            " positions, but the bytes were asked per ", tokens, " tokens");
}

}  // namespace

double measured_bytes_per_token(const KVCache& cache, std::int64_t tokens) {
  check_tokens(tokens, cache.length(), "measured_bytes_per_token");
  std::int64_t bytes = 0;
  for (const LayerCache& layer : cache.layers)
    bytes += bytes_of(layer.keys) + bytes_of(layer.values) + bytes_of(layer.encoding.tensor);
  return double(bytes) / double(tokens);
}

double measured_bytes_per_token(const LatentCache& cache, std::int64_t tokens) {
  check_tokens(tokens, cache.length(), "measured_bytes_per_token");
  std::int64_t bytes = 0;
  for (const LatentLayerCache& layer : cache.layers)
    bytes += bytes_of(layer.latents) + bytes_of(layer.rotary_keys);
  return double(bytes) / double(tokens);
}

double measured_grouped_bytes_per_token(const KVCache& cache, std::int64_t kv_heads,
                                        std::int64_t tokens) {
  check_tokens(tokens, cache.length(), "measured_grouped_bytes_per_token");
  std::int64_t bytes = 0;
  for (const LayerCache& layer : cache.layers) {
    const std::int64_t heads = layer.keys.size(1);
    ag::check(kv_heads > 0 && heads % kv_heads == 0, "measured_grouped_bytes_per_token",
              "key/value heads ", kv_heads, " must divide the cache's ", heads, " heads");
    bytes += bytes_of(ag::slice(layer.keys, 1, 0, kv_heads)) +
             bytes_of(ag::slice(layer.values, 1, 0, kv_heads));
  }
  return double(bytes) / double(tokens);
}

namespace {

// Feeds the same N tokens one at a time through a model with a cache.
template <class Model, class Cache>
void decode_tokens(Model& model, Cache& cache, std::int64_t tokens, std::int64_t vocab) {
  ag::NoGradGuard no_grad;
  for (std::int64_t t = 0; t < tokens; ++t) model.forward({{t % vocab}, {1, 1}}, t, &cache);
}

CacheBytesRow row(std::string model, std::string attention, std::int64_t elements,
                  std::int64_t bytes_per_element, double measured = -1) {
  return {std::move(model),
          std::move(attention),
          elements,
          bytes_per_element,
          double(elements * bytes_per_element),
          measured};
}

}  // namespace

std::vector<CacheBytesRow> cache_bytes_table(const SmallCacheSizes& s) {
  ag::check(s.tokens > 0, "cache_bytes_table", "decode at least one token, got ", s.tokens);
  ag::Rng rng(12);
  const std::int64_t vocab = 26, head_width = s.width / s.heads;
  DecoderConfig config;
  config.vocab = vocab;
  config.width = s.width;
  config.heads = s.heads;
  config.layers = s.layers;
  config.ffn_width = 4 * s.width;
  // the keys after RoPE's rotation are what a served model caches; the bytes are the same
  Decoder mha(config, std::make_shared<RotaryEncoding>(head_width), rng);
  KVCache kv;
  decode_tokens(mha, kv, s.tokens, vocab);

  LatentDecoderConfig latent_config;
  latent_config.vocab = vocab;
  latent_config.layers = s.layers;
  latent_config.ffn_width = 4 * s.width;
  latent_config.attention = {s.width, s.heads, head_width, s.latent_width, s.rotary_width, 10000};
  LatentDecoder mla(latent_config, rng);
  LatentCache latent;
  decode_tokens(mla, latent, s.tokens, vocab);

  const std::string small = "small (L = " + std::to_string(s.layers) + ", float32)";
  const std::string gqa_name = "GQA (G = " + std::to_string(s.kv_heads) + ")";
  const std::string mla_name = "MLA (d_c = " + std::to_string(s.latent_width) +
                               ", d_R = " + std::to_string(s.rotary_width) + ")";
  std::vector<CacheBytesRow> rows;
  rows.push_back(row(small, "MHA (H = " + std::to_string(s.heads) + ")",
                     mha_cache_elements(s.layers, s.heads, head_width), 4,
                     measured_bytes_per_token(kv, s.tokens)));
  rows.push_back(row(small, gqa_name, gqa_cache_elements(s.layers, s.kv_heads, head_width), 4,
                     measured_grouped_bytes_per_token(kv, s.kv_heads, s.tokens)));
  rows.push_back(row(small, mla_name,
                     latent_cache_elements(s.layers, s.latent_width, s.rotary_width), 4,
                     measured_bytes_per_token(latent, s.tokens)));
  // As served: bfloat16 elements, 2 bytes each.
  rows.push_back(row("DeepSeek-V3 (L = 61, bf16)", "MHA (H = 128, d_h = 128)",
                     mha_cache_elements(61, 128, 128), 2));
  rows.push_back(row("DeepSeek-V3 (L = 61, bf16)", "MLA (d_c = 512, d_R = 64)",
                     latent_cache_elements(61, 512, 64), 2));
  rows.push_back(row("Llama-3-8B (L = 32, bf16)", "MHA (H = 32, d_h = 128)",
                     mha_cache_elements(32, 32, 128), 2));
  rows.push_back(row("Llama-3-8B (L = 32, bf16)", "GQA (G = 8, d_h = 128)",
                     gqa_cache_elements(32, 8, 128), 2));
  return rows;
}

std::string cache_bytes_markdown(const std::vector<CacheBytesRow>& rows) {
  std::ostringstream out;
  out << "| model | attention | numbers per token | bytes each | bytes per token | measured |\n"
      << "|---|---|---:|---:|---:|---:|\n";
  for (const CacheBytesRow& r : rows) {
    out << "| " << r.model << " | " << r.attention << " | " << r.elements_per_token << " | "
        << r.bytes_per_element << " | " << std::fixed << std::setprecision(0) << r.bytes_per_token
        << " | ";
    if (r.measured_bytes_per_token >= 0)
      out << std::setprecision(0) << r.measured_bytes_per_token;
    else
      out << "-";
    out << " |\n";
  }
  return out.str();
}

}  // namespace pe
