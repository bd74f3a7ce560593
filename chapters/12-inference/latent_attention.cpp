#include "chapters/12-inference/latent_attention.hpp"

#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "ag/functional.hpp"
#include "chapters/01-attention/attention.hpp"
#include "chapters/05-rope/rope.hpp"

namespace pe {

using ag::Tensor;

void LatentShape::validate() const {
  ag::check(width > 0 && heads > 0 && head_width > 0 && latent_width > 0 && rotary_width > 0,
            "LatentShape", "widths and heads must be positive, got C ", width, ", H ", heads,
            ", d_h ", head_width, ", d_c ", latent_width, ", d_R ", rotary_width);
  ag::check(rotary_width % 2 == 0, "LatentShape", "the rotary width d_R must be even, got ",
            rotary_width);
  ag::check(rope_base > 1, "LatentShape", "RoPE's base must be above 1, got ", rope_base);
}

namespace {
const LatentShape& validated(const LatentShape& shape) {
  shape.validate();
  return shape;
}
}  // namespace

LatentAttention::LatentAttention(const LatentShape& shape_, ag::Rng& rng, ag::Dtype dtype)
    : shape(validated(shape_)),
      down_kv(shape_.width, shape_.latent_width, rng, false, dtype),
      key_rotary(shape_.width, shape_.rotary_width, rng, false, dtype),
      up_key(shape_.latent_width, shape_.heads * shape_.head_width, rng, false, dtype),
      up_value(shape_.latent_width, shape_.heads * shape_.head_width, rng, false, dtype),
      query(shape_.width, shape_.heads * shape_.head_width, rng, false, dtype),
      query_rotary(shape_.width, shape_.heads * shape_.rotary_width, rng, false, dtype),
      output(shape_.heads * shape_.head_width, shape_.width, rng, false, dtype) {
  register_module("down_kv", down_kv);
  register_module("key_rotary", key_rotary);
  register_module("up_key", up_key);
  register_module("up_value", up_value);
  register_module("query", query);
  register_module("query_rotary", query_rotary);
  register_module("output", output);
}

Tensor scores_against_shared(const Tensor& a, const Tensor& b) {
  ag::check(a.dim() == 4 && b.dim() == 3 && a.size(0) == b.size(0) && a.size(3) == b.size(2),
            "scores_against_shared", "expected a [B, H, Tq, K] and b [B, Tk, K], got ",
            ag::shape_string(a.shape()), " and ", ag::shape_string(b.shape()));
  const std::int64_t B = a.size(0), H = a.size(1), Tq = a.size(2), K = a.size(3);
  // every head's queries are rows against the same keys: [B, H*Tq, K] x [B, Tk, K]^T
  const Tensor stacked = ag::matmul_transposed(ag::reshape(a, {B, H * Tq, K}), b);
  return ag::reshape(stacked, {B, H, Tq, b.size(1)});
}

void LatentAttention::check_input(const Tensor& x, std::int64_t offset,
                                  const LatentLayerCache* cache) const {
  ag::check(x.dim() == 3 && x.size(2) == shape.width, "LatentAttention", "expected x [B, T, ",
            shape.width, "], got ", ag::shape_string(x.shape()));
  ag::check(offset >= 0, "LatentAttention", "the offset must not be negative, got ", offset);
  if (cache) {
    ag::check(offset == cache->length(), "LatentAttention", "offset ", offset,
              " does not continue the cache of length ", cache->length());
    // (the message's arguments are evaluated even when the check passes)
    const std::int64_t held = cache->length() > 0 ? cache->latents.size(0) : x.size(0);
    ag::check(held == x.size(0), "LatentAttention", "the cache holds ", held, " sequences, x has ",
              x.size(0));
  }
}

Tensor LatentAttention::rotate(const Tensor& t, std::int64_t offset) const {
  const auto [cos, sin] =
      rope_tables(offset + t.size(-2), shape.rotary_width, shape.rope_base, t.dtype());
  return apply_rotary(t, Positions(offset), cos, sin, RotaryLayout::adjacent);
}

// [latent-cache]
std::pair<Tensor, Tensor> LatentAttention::keys_for(const Tensor& x, std::int64_t offset,
                                                    LatentLayerCache* cache) {
  Tensor latents = down_kv.forward(x);                   // c = x W_DKV: [B, T, d_c]
  Tensor k_rot = rotate(key_rotary.forward(x), offset);  // k^R = RoPE(x W_KR): [B, T, d_R]
  if (cache) {
    if (cache->length() > 0) {
      latents = ag::concat({cache->latents, latents}, 1);
      k_rot = ag::concat({cache->rotary_keys, k_rot}, 1);
    }
    cache->latents = latents.detach();  // all the cache keeps: d_c + d_R numbers per token
    cache->rotary_keys = k_rot.detach();
  }
  return {latents, k_rot};
}
// [latent-cache]

Tensor LatentAttention::rotary_scores(const Tensor& x, std::int64_t offset, const Tensor& k_rot) {
  // q^R_h = RoPE(x W_QR_h): [B, H, Tq, d_R]; one k^R for all heads
  const Tensor q_rot = rotate(split_heads(query_rotary.forward(x), shape.heads), offset);
  return scores_against_shared(q_rot, k_rot);
}

Tensor LatentAttention::content_scores_expanded(const Tensor& x, const Tensor& latents) {
  const Tensor q = split_heads(query.forward(x), shape.heads);         // [B, H, Tq, d_h]
  const Tensor k = split_heads(up_key.forward(latents), shape.heads);  // [B, H, Tk, d_h]
  return ag::matmul_transposed(q, k);
}

// [absorbed-scores]
Tensor LatentAttention::content_scores_absorbed(const Tensor& x, const Tensor& latents,
                                                const AbsorbedLatent& absorbed) {
  // x W_UQ_h W_UK_h^T for every head: [B, Tq, H*d_c] -> [B, H, Tq, d_c], then against the
  // cached latents themselves: k^C is never formed
  const Tensor q_latent = split_heads(ag::matmul(x, absorbed.query_latent), shape.heads);
  return scores_against_shared(q_latent, latents);
}
// [absorbed-scores]

AbsorbedLatent LatentAttention::absorbed() const {
  const std::int64_t H = shape.heads, D = shape.head_width, C = shape.width,
                     Dc = shape.latent_width;
  // W_UQ as [H, C, d_h] and W_UK as [H, d_c, d_h]: per head W_UQ_h W_UK_h^T, [H, C, d_c]
  const Tensor w_uq = ag::permute(ag::reshape(query.weight, {C, H, D}), {1, 0, 2});
  const Tensor w_uk = ag::permute(ag::reshape(up_key.weight, {Dc, H, D}), {1, 0, 2});
  const Tensor query_latent = ag::matmul_transposed(w_uq, w_uk);  // [H, C, d_c]
  // W_UV as [H, d_c, d_h] and W_O as [H, d_h, C]: per head W_UV_h W_O_h, [H, d_c, C]
  const Tensor w_uv = ag::permute(ag::reshape(up_value.weight, {Dc, H, D}), {1, 0, 2});
  const Tensor w_o = ag::reshape(output.weight, {H, D, C});
  const Tensor latent_output = ag::matmul(w_uv, w_o);  // [H, d_c, C]
  return {ag::reshape(ag::permute(query_latent, {1, 0, 2}), {C, H * Dc}),
          ag::reshape(latent_output, {H * Dc, C})};
}

Tensor LatentAttention::masked_weights(const Tensor& scores) {
  const std::int64_t Tq = scores.size(2), Tk = scores.size(3);
  // The queries are the last Tq of the Tk keys (offset - cached .. offset + Tq - 1): with a
  // cache the keys start at 0, without one they start at offset. The mask needs only that.
  const Tensor mask = causal_mask(Tq, Tk, Positions(Tk - Tq), scores.dtype());
  return ag::softmax(ag::masked_fill(scores, mask, -std::numeric_limits<double>::infinity()));
}

// [latent-forward]
Tensor LatentAttention::forward(const Tensor& x, std::int64_t offset, LatentLayerCache* cache,
                                LatentMode mode) {
  if (mode == LatentMode::absorbed) return forward(x, offset, cache, absorbed());
  check_input(x, offset, cache);
  const auto [latents, k_rot] = keys_for(x, offset, cache);
  const double scale = 1.0 / std::sqrt(double(shape.head_width + shape.rotary_width));
  const Tensor scores =
      ag::mul(ag::add(content_scores_expanded(x, latents), rotary_scores(x, offset, k_rot)), scale);
  const Tensor values = split_heads(up_value.forward(latents), shape.heads);  // [B, H, Tk, d_h]
  return output.forward(merge_heads(ag::matmul(masked_weights(scores), values)));
}

Tensor LatentAttention::forward(const Tensor& x, std::int64_t offset, LatentLayerCache* cache,
                                const AbsorbedLatent& absorbed) {
  check_input(x, offset, cache);
  const auto [latents, k_rot] = keys_for(x, offset, cache);
  const double scale = 1.0 / std::sqrt(double(shape.head_width + shape.rotary_width));
  const Tensor scores = ag::mul(
      ag::add(content_scores_absorbed(x, latents, absorbed), rotary_scores(x, offset, k_rot)),
      scale);
  const Tensor weights = masked_weights(scores);  // [B, H, Tq, Tk]
  // sum_h (w_h c) (W_UV_h W_O_h): the weights average latents, which then go straight to C
  const Tensor mixed = scores_against_shared(weights, ag::transpose(latents, 1, 2));
  return ag::matmul(merge_heads(mixed), absorbed.latent_output);  // [B, Tq, H*d_c] -> [B, Tq, C]
}
// [latent-forward]

Tensor LatentAttention::scores(const Tensor& x, LatentMode mode) {
  check_input(x, 0, nullptr);
  const auto [latents, k_rot] = keys_for(x, 0, nullptr);
  const Tensor content = mode == LatentMode::absorbed
                             ? content_scores_absorbed(x, latents, absorbed())
                             : content_scores_expanded(x, latents);
  return ag::mul(ag::add(content, rotary_scores(x, 0, k_rot)),
                 1.0 / std::sqrt(double(shape.head_width + shape.rotary_width)));
}

LatentBlock::LatentBlock(const LatentDecoderConfig& config, ag::Rng& rng, ag::Dtype dtype)
    : norm1(config.attention.width, 1e-5, dtype),
      attention(config.attention, rng, dtype),
      norm2(config.attention.width, 1e-5, dtype),
      expand(config.attention.width, config.ffn_width, rng, true, dtype),
      contract(config.ffn_width, config.attention.width, rng, true, dtype) {
  register_module("norm1", norm1);
  register_module("attention", attention);
  register_module("norm2", norm2);
  register_module("expand", expand);
  register_module("contract", contract);
}

Tensor LatentBlock::forward(const Tensor& x, std::int64_t offset, LatentLayerCache* cache,
                            LatentMode mode) {
  Tensor h = ag::add(x, attention.forward(norm1.forward(x), offset, cache, mode));
  return ag::add(h, contract.forward(expand.forward(norm2.forward(h), ag::Activation::relu)));
}

namespace {
const LatentDecoderConfig& validated(const LatentDecoderConfig& config) {
  ag::check(config.vocab > 0 && config.layers > 0 && config.ffn_width > 0, "LatentDecoder",
            "vocab, layers and ffn_width must be positive, got ", config.vocab, ", ", config.layers,
            " and ", config.ffn_width);
  config.attention.validate();
  return config;
}
}  // namespace

LatentDecoder::LatentDecoder(const LatentDecoderConfig& config_, ag::Rng& rng, ag::Dtype dtype)
    : config(validated(config_)),
      tokens(config_.vocab, config_.attention.width, rng, 1.0, dtype),
      final_norm(config_.attention.width, 1e-5, dtype),
      head(config_.attention.width, config_.vocab, rng, true, dtype) {
  register_module("tokens", tokens);
  for (std::int64_t i = 0; i < config.layers; ++i) {
    blocks.push_back(std::make_unique<LatentBlock>(config, rng, dtype));
    register_module("blocks." + std::to_string(i), *blocks.back());
  }
  register_module("final_norm", final_norm);
  register_module("head", head);
}

Tensor LatentDecoder::forward(const ag::Indices& ids, std::int64_t offset, LatentCache* cache,
                              LatentMode mode) {
  ag::check(ids.shape.size() == 2, "LatentDecoder", "ids must be [B, T], got ",
            ag::shape_string(ids.shape));
  if (cache) {
    ag::check(offset == cache->length(), "LatentDecoder", "offset ", offset,
              " does not continue the cache of length ", cache->length());
    cache->layers.resize(blocks.size());
  }
  Tensor x = tokens.forward(ids);  // [B, T, C]
  for (std::size_t i = 0; i < blocks.size(); ++i)
    x = blocks[i]->forward(x, offset, cache ? &cache->layers[i] : nullptr, mode);
  return head.forward(final_norm.forward(x));
}

}  // namespace pe
