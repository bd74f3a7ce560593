// DeepSeek's multi-head latent attention (MLA, DeepSeek-V2, Liu et al. 2024, section 2.1) with
// decoupled RoPE: the cache keeps, per token, one compressed latent c_t (no position in it) and
// one rotary key k^R_t shared by every head, so that the up-projections of the keys and values
// can be folded into the query and output projections (the absorption trick) at decode time.
#pragma once
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "ag/nn.hpp"

namespace pe {

/// The sizes of one latent attention layer. The defaults are the chapter's small experiment;
/// DeepSeek-V3 has C = 7168, H = 128, d_h = 128, d_c = 512, d_R = 64.
struct LatentShape {
  std::int64_t width = 64;         ///< C, the model width
  std::int64_t heads = 8;          ///< H, query heads
  std::int64_t head_width = 8;     ///< d_h, the non-rotary (content) width of a head
  std::int64_t latent_width = 16;  ///< d_c, the width of the cached latent c_t
  std::int64_t rotary_width = 8;   ///< d_R, the rotary width of q^R and the shared k^R (even)
  double rope_base = 10000;        ///< RoPE's theta_i = base^(-2i/d_R)
  /// An ag::Error naming the first bad field: all widths positive, d_R even, base > 1.
  void validate() const;
};

/// What one latent layer caches per token: the latent and the shared rotary key, nothing else
/// (no per-head key or value). B sequences, T_cached positions.
struct LatentLayerCache {
  ag::Tensor latents;      ///< c = x W_DKV: [B, T_cached, d_c]
  ag::Tensor rotary_keys;  ///< k^R = RoPE(x W_KR): [B, T_cached, d_R], rotated at its position
  /// T_cached, the number of positions held.
  std::int64_t length() const { return latents.defined() ? latents.size(1) : 0; }
};

/// How the content part of the attention is computed.
enum class LatentMode {
  expanded,  ///< k^C = c W_UK_h and v = c W_UV_h are formed, as in training
  absorbed   ///< W_UQ_h W_UK_h^T and W_UV_h W_O_h are used, k^C and v never formed
};

/// The absorbed matrices of one layer (the absorption trick), stacked over the heads.
struct AbsorbedLatent {
  /// [C, H * d_c]: columns h*d_c .. (h+1)*d_c-1 hold W_UQ_h W_UK_h^T, so that
  /// q^C_h . k^C_h = (x W_UQ_h W_UK_h^T) . c.
  ag::Tensor query_latent;
  /// [H * d_c, C]: rows h*d_c .. (h+1)*d_c-1 hold W_UV_h W_O_h, so that
  /// sum_h (w_h c W_UV_h) W_O_h = sum_h (w_h c) (W_UV_h W_O_h).
  ag::Tensor latent_output;
};

/// Causal multi-head latent attention with decoupled RoPE.  x: [B, T, C] -> [B, T, C]
///
///   c_t = x_t W_DKV,  k^R_t = RoPE(x_t W_KR, t)             (cached: d_c + d_R per token)
///   k^C_h = c W_UK_h,  v_h = c W_UV_h,  q^C_h = x W_UQ_h,  q^R_h = RoPE(x W_QR_h, t)
///   score_h(m, n) = (q^C_h,m . k^C_h,n + q^R_h,m . k^R_n) / sqrt(d_h + d_R)
///   out = concat_h(softmax(score_h) v_h) W_O
///
/// Left out from DeepSeek-V2: the query compression (W_DQ, and the RMSNorm after each
/// down-projection), which saves activation memory in training but changes nothing in the
/// cache; biases (DeepSeek's projections have none, and a key bias would add a term the
/// absorption must carry separately). RoPE is chapter 5's apply_rotary (adjacent layout).
class LatentAttention : public ag::Module {
 public:
  /// The shape as validate() checks it; weights drawn from rng, no biases.
  LatentAttention(const LatentShape& shape, ag::Rng& rng, ag::Dtype dtype = ag::Dtype::f32);

  /// x [B, T, C] at positions offset .. offset+T-1 -> [B, T, C]. Without a cache the keys are
  /// x's own tokens at the same positions (a pass at any offset gives the same output: RoPE
  /// sees only differences of positions). With a cache, its latents and
  /// rotary keys are extended by this call's and the queries attend to all of them; offset
  /// must then equal the cache's length. mode chooses how the content part is computed (both
  /// give the same numbers up to rounding); absorbed computes absorbed() on each call.
  ag::Tensor forward(const ag::Tensor& x, std::int64_t offset = 0,
                     LatentLayerCache* cache = nullptr, LatentMode mode = LatentMode::expanded);
  /// The same, absorbed, with matrices computed once (by absorbed()) and kept by the caller,
  /// as a server does after training.
  ag::Tensor forward(const ag::Tensor& x, std::int64_t offset, LatentLayerCache* cache,
                     const AbsorbedLatent& absorbed);
  /// The scaled scores before the causal mask of a full pass over x at positions 0 .. T-1:
  /// [B, H, T, T]. For the tests that compare the two modes.
  ag::Tensor scores(const ag::Tensor& x, LatentMode mode);
  /// W_UQ_h W_UK_h^T and W_UV_h W_O_h for every head, from the current weights.
  AbsorbedLatent absorbed() const;

  const LatentShape shape;  ///< as constructed
  ag::Linear down_kv;       ///< W_DKV: [C, d_c]
  ag::Linear key_rotary;    ///< W_KR: [C, d_R], one rotary key shared by the heads
  ag::Linear up_key;        ///< W_UK: [d_c, H * d_h], head h in columns h*d_h ..
  ag::Linear up_value;      ///< W_UV: [d_c, H * d_h]
  ag::Linear query;         ///< W_UQ: [C, H * d_h] (no W_DQ: see the class comment)
  ag::Linear query_rotary;  ///< W_QR: [C, H * d_R]
  ag::Linear output;        ///< W_O: [H * d_h, C]

 private:
  // The latents and rotary keys of every key position (cached ones first), [B, Tk, d_c] and
  // [B, Tk, d_R], after appending this call's to the cache.
  std::pair<ag::Tensor, ag::Tensor> keys_for(const ag::Tensor& x, std::int64_t offset,
                                             LatentLayerCache* cache);
  // q^R [B, H, Tq, d_R] . k^R [B, Tk, d_R] -> [B, H, Tq, Tk], unscaled.
  ag::Tensor rotary_scores(const ag::Tensor& x, std::int64_t offset, const ag::Tensor& k_rot);
  ag::Tensor content_scores_expanded(const ag::Tensor& x, const ag::Tensor& latents);
  ag::Tensor content_scores_absorbed(const ag::Tensor& x, const ag::Tensor& latents,
                                     const AbsorbedLatent& absorbed);
  // softmax after the causal mask, the queries being the last Tq of the Tk keys
  ag::Tensor masked_weights(const ag::Tensor& scores);
  void check_input(const ag::Tensor& x, std::int64_t offset, const LatentLayerCache* cache) const;
  // RoPE at positions offset .. offset+T-1 of t [..., T, d_R] (chapter 5's tables and rotation)
  ag::Tensor rotate(const ag::Tensor& t, std::int64_t offset) const;
};

/// a [B, H, Tq, K] against b [B, Tk, K], one b shared by the heads: [B, H, Tq, Tk] with
/// out[b, h, i, j] = a[b, h, i] . b[b, j] (one matmul: the heads' rows are stacked).
ag::Tensor scores_against_shared(const ag::Tensor& a, const ag::Tensor& b);

/// The sizes of a LatentDecoder (the cache table's small model; training uses one layer).
struct LatentDecoderConfig {
  std::int64_t vocab = 26;       ///< V, the number of token ids
  LatentShape attention;         ///< every layer's attention
  std::int64_t layers = 2;       ///< L, the number of blocks
  std::int64_t ffn_width = 256;  ///< F, the feed-forward width
};

/// One LatentLayerCache per block: all a LatentDecoder keeps between decoding steps.
struct LatentCache {
  std::vector<LatentLayerCache> layers;  ///< one per block, filled by the first forward
  /// The number of positions cached so far (0 before the first forward).
  std::int64_t length() const { return layers.empty() ? 0 : layers.front().length(); }
};

/// x -> x + attention(norm1(x)) -> x + ffn(norm2(x)), chapter 1's pre-LN block around a
/// LatentAttention.
class LatentBlock : public ag::Module {
 public:
  /// The config's attention shape and feed-forward width.
  LatentBlock(const LatentDecoderConfig& config, ag::Rng& rng, ag::Dtype dtype);
  /// x [B, T, C] at offset .. offset+T-1 -> [B, T, C]
  ag::Tensor forward(const ag::Tensor& x, std::int64_t offset, LatentLayerCache* cache,
                     LatentMode mode);

  ag::LayerNorm norm1;        ///< LN_1, before attention
  LatentAttention attention;  ///< the latent attention, positions by decoupled RoPE
  ag::LayerNorm norm2;        ///< LN_2, before the feed-forward network
  ag::Linear expand;          ///< W_1: [C, F]
  ag::Linear contract;        ///< W_2: [F, C]
};

/// Chapter 1's decoder with latent attention: token embedding (no positional embedding: the
/// positions are the decoupled RoPE's), L blocks, a final norm and the output head.
/// ids [B, T] -> logits [B, T, V]
class LatentDecoder : public ag::Module {
 public:
  /// The config's sizes (an ag::Error for a bad one); weights drawn from rng.
  LatentDecoder(const LatentDecoderConfig& config, ag::Rng& rng, ag::Dtype dtype = ag::Dtype::f32);
  /// ids [B, T] at positions offset .. offset+T-1 -> logits [B, T, V]. With a cache, offset
  /// must equal its length; the cache then holds only latents and rotary keys.
  ag::Tensor forward(const ag::Indices& ids, std::int64_t offset = 0, LatentCache* cache = nullptr,
                     LatentMode mode = LatentMode::expanded);

  const LatentDecoderConfig config;                  ///< the sizes it was built with
  ag::Embedding tokens;                              ///< E: [V, C]
  std::vector<std::unique_ptr<LatentBlock>> blocks;  ///< L blocks
  ag::LayerNorm final_norm;                          ///< LN_f
  ag::Linear head;                                   ///< W_head: [C, V]
};

}  // namespace pe
