// The pre-LayerNorm decoder: token embedding, blocks of attention and feed-forward, a final
// norm and the output head.
#pragma once
#include <memory>
#include <vector>

#include "chapters/01-attention/attention.hpp"

namespace pe {

/// The reference experiment's model: 1 layer, 1 head, width 256, feed-forward 1024, ReLU.
struct DecoderConfig {
  std::int64_t vocab = 26;        ///< V, the number of token ids
  std::int64_t width = 256;       ///< C, the model width
  std::int64_t heads = 1;         ///< H, attention heads per layer
  std::int64_t layers = 1;        ///< L, the number of blocks
  std::int64_t ffn_width = 1024;  ///< F, the feed-forward width
  bool causal = true;             ///< the causal mask (false only to show equivariance)
  /// One learned sink logit per head in every attention layer (chapter 12: GPT-OSS's sinks,
  /// SelfAttention::sink_logits); off in every earlier chapter.
  bool sink_logits = false;
};

/// x -> x + attention(norm1(x)) -> x + ffn(norm2(x)), with ffn = Linear, ReLU, Linear.
class DecoderBlock : public ag::Module {
 public:
  /// positions: this block's part of the positional encoding (nullptr for none).
  DecoderBlock(const DecoderConfig& config, ag::Rng& rng, ag::Dtype dtype = ag::Dtype::f32,
               std::shared_ptr<AttentionPositions> positions = nullptr);
  /// x [B, T, C] at positions `at` -> [B, T, C]
  ag::Tensor forward(const ag::Tensor& x, const Positions& at, LayerCache* cache);
  /// A left-padded batch (chapter 12): the attention runs each row alone on its real columns
  /// (SelfAttention::forward with RowStarts); the rest is position-wise.
  ag::Tensor forward(const ag::Tensor& x, const RowStarts& rows, LayerCache* cache);
  /// The block's second half: h + ffn(norm2(h)), for h = x + attention(norm1(x)). Also what
  /// chapter 12's window cache runs after its own attention step.
  ag::Tensor feed_forward(const ag::Tensor& h);

  ag::LayerNorm norm1;      ///< LN_1, before attention
  SelfAttention attention;  ///< the attention, with this block's part of the encoding
  ag::LayerNorm norm2;      ///< LN_2, before the feed-forward network
  ag::Linear expand;        ///< W_1: [C, F]
  ag::Linear contract;      ///< W_2: [F, C]
};

/// One cache per layer, for decoding a token at a time.
struct KVCache {
  std::vector<LayerCache> layers;  ///< one per block, filled by the first forward
  /// The number of positions cached so far (0 before the first forward).
  std::int64_t length() const { return layers.empty() ? 0 : layers.front().length(); }
};

/// The whole model: token embedding, the encoding's embed hook, L blocks, a final norm and
/// the output head.  ids [B, T] -> logits [B, T, V]
class Decoder : public ag::Module {
 public:
  /// Asks the encoding for one attention part per layer (make_layer_part(rng, i, L)), which
  /// block i's attention owns.
  Decoder(const DecoderConfig& config, std::shared_ptr<PositionalEncoding> encoding, ag::Rng& rng,
          ag::Dtype dtype = ag::Dtype::f32);

  /// ids [B, T] at positions `at` (0 .. T-1 by default; an offset o means o .. o+T-1, or
  /// sorted sampled ids shared by the batch) -> logits [B, T, V].
  /// With a cache, the positions must be contiguous from the number already cached.
  ag::Tensor forward(const ag::Indices& ids, const Positions& at = 0, KVCache* cache = nullptr);
  /// A left-padded batch (chapter 12): ids [B, T], row b's columns at rows.first(b) ..
  /// (negative: padding; see RowStarts) -> logits [B, T, V]. Each row gets the logits it has
  /// when run alone; a padding column's logits are meaningless. With a cache, each call's row
  /// starts must continue it (cached columns - the row's padding). The encoding's embed hook
  /// and attention hooks are called once per row on its real columns with plain Positions, so
  /// every encoding works unchanged; without padding this is forward(ids, cached columns).
  ag::Tensor forward(const ag::Indices& ids, const RowStarts& rows, KVCache* cache = nullptr);
  /// The hidden states after each block (before the final norm): layers x [B, T, C].
  /// The probes of chapter 7 read position out of them.
  std::vector<ag::Tensor> hidden_states(const ag::Indices& ids);
  /// Turns the capture of attention weights on or off in every block.
  void capture_attention(bool on);
  /// Attention weights of the last forward pass, one [B, H, Tq, Tk] per layer.
  std::vector<ag::Tensor> attention_weights() const;

  const DecoderConfig config;                         ///< the sizes it was built with
  std::shared_ptr<PositionalEncoding> encoding;       ///< never null ("none" for no encoding)
  ag::Embedding tokens;                               ///< E: [V, C]
  std::vector<std::unique_ptr<DecoderBlock>> blocks;  ///< L blocks
  ag::LayerNorm final_norm;                           ///< LN_f
  ag::Linear head;                                    ///< W_head: [C, V]

 private:
  Decoder(const DecoderConfig& config, std::shared_ptr<PositionalEncoding> encoding,
          std::vector<std::shared_ptr<AttentionPositions>> parts, ag::Rng& rng, ag::Dtype dtype);
  ag::Tensor run_blocks(const ag::Indices& ids, const Positions& at, KVCache* cache,
                        std::vector<ag::Tensor>* hidden);
  ag::Tensor run_padded_blocks(const ag::Indices& ids, const RowStarts& rows, KVCache* cache);
};

}  // namespace pe
