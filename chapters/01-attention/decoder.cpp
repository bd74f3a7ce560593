#include "chapters/01-attention/decoder.hpp"

#include <algorithm>
#include <utility>

namespace pe {

using ag::Tensor;

namespace {

// [attention-parts]
// One part of the encoding for each layer, in layer order.
std::vector<std::shared_ptr<AttentionPositions>> attention_parts(
    const std::shared_ptr<PositionalEncoding>& encoding, const DecoderConfig& config,
    ag::Rng& rng) {
  ag::check(encoding != nullptr, "Decoder", "needs an encoding (use NoEncoding for none)");
  ag::check(config.layers > 0, "Decoder", "needs at least one layer, got ", config.layers);
  std::vector<std::shared_ptr<AttentionPositions>> parts;
  for (std::int64_t i = 0; i < config.layers; ++i) {
    parts.push_back(encoding->make_layer_part(rng, i, config.layers));
    ag::check(parts.back() != nullptr, "Decoder", "encoding '", encoding->name(),
              "' made no attention part for layer ", i);
  }
  return parts;
}
// [attention-parts]

}  // namespace

DecoderBlock::DecoderBlock(const DecoderConfig& config, ag::Rng& rng, ag::Dtype dtype,
                           std::shared_ptr<AttentionPositions> positions)
    : norm1(config.width, 1e-5, dtype),
      attention(config.width, config.heads, rng, config.causal, dtype, std::move(positions),
                config.sink_logits),
      norm2(config.width, 1e-5, dtype),
      expand(config.width, config.ffn_width, rng, true, dtype),
      contract(config.ffn_width, config.width, rng, true, dtype) {
  register_module("norm1", norm1);
  register_module("attention", attention);
  register_module("norm2", norm2);
  register_module("expand", expand);
  register_module("contract", contract);
}

// [block-forward]
Tensor DecoderBlock::forward(const Tensor& x, const Positions& at, LayerCache* cache) {
  return feed_forward(ag::add(x, attention.forward(norm1.forward(x), at, cache)));
}

Tensor DecoderBlock::feed_forward(const Tensor& h) {
  return ag::add(h, contract.forward(expand.forward(norm2.forward(h), ag::Activation::relu)));
}
// [block-forward]

Tensor DecoderBlock::forward(const Tensor& x, const RowStarts& rows, LayerCache* cache) {
  return feed_forward(ag::add(x, attention.forward(norm1.forward(x), rows, cache)));
}

// The parts are made before any weight of the decoder, so that all of an encoding's
// parameters, shared or per layer, are drawn from rng first.
Decoder::Decoder(const DecoderConfig& config_, std::shared_ptr<PositionalEncoding> encoding_,
                 ag::Rng& rng, ag::Dtype dtype)
    : Decoder(config_, encoding_, attention_parts(encoding_, config_, rng), rng, dtype) {}

Decoder::Decoder(const DecoderConfig& config_, std::shared_ptr<PositionalEncoding> encoding_,
                 std::vector<std::shared_ptr<AttentionPositions>> parts, ag::Rng& rng,
                 ag::Dtype dtype)
    : config(config_),
      encoding(std::move(encoding_)),
      tokens(config_.vocab, config_.width, rng, 1.0, dtype),
      final_norm(config_.width, 1e-5, dtype),
      head(config_.width, config_.vocab, rng, true, dtype) {
  register_module("tokens", tokens);
  register_module("encoding", *encoding);
  for (std::size_t i = 0; i < parts.size(); ++i) {
    blocks.push_back(std::make_unique<DecoderBlock>(config, rng, dtype, std::move(parts[i])));
    register_module("blocks." + std::to_string(i), *blocks.back());
  }
  register_module("final_norm", final_norm);
  register_module("head", head);
}

// [decoder-forward]
Tensor Decoder::run_blocks(const ag::Indices& ids, const Positions& at, KVCache* cache,
                           std::vector<Tensor>* hidden) {
  ag::check(ids.shape.size() == 2, "Decoder", "ids must be [B, T], got ",
            ag::shape_string(ids.shape));
  at.check_count(ids.shape[1], "Decoder");
  if (cache) {
    // sampled positions are a full pass at chosen ids; a cache continues 0, 1, 2, ...
    ag::check(at.is_contiguous(), "Decoder",
              "a key/value cache needs contiguous positions, got sampled ones");
    ag::check(at.first() == cache->length(), "Decoder", "offset ", at.first(),
              " does not continue the cache of length ", cache->length());
    for (const LayerCache& layer : cache->layers)
      for (std::int64_t p : layer.padding)
        ag::check(p == 0, "Decoder",
                  "the cache holds left-padded rows: continue it with RowStarts, not Positions");
    cache->layers.resize(blocks.size());
  }
  Tensor x = encoding->embed(tokens.forward(ids), at);  // [B, T, C]
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    x = blocks[i]->forward(x, at, cache ? &cache->layers[i] : nullptr);
    if (hidden) hidden->push_back(x);
  }
  return x;
}

Tensor Decoder::forward(const ag::Indices& ids, const Positions& at, KVCache* cache) {
  return head.forward(final_norm.forward(run_blocks(ids, at, cache, nullptr)));
}
// [decoder-forward]

// [padded-decoder]
Tensor Decoder::run_padded_blocks(const ag::Indices& ids, const RowStarts& rows, KVCache* cache) {
  ag::check(ids.shape.size() == 2, "Decoder", "ids must be [B, T], got ",
            ag::shape_string(ids.shape));
  const std::int64_t B = ids.shape[0], T = ids.shape[1], L = cache ? cache->length() : 0;
  const std::vector<std::int64_t> padding = row_padding(
      rows, B, T, L,
      cache && !cache->layers.empty() ? cache->layers.front().padding : std::vector<std::int64_t>{},
      "Decoder");
  if (std::all_of(padding.begin(), padding.end(), [](std::int64_t p) { return p == 0; }))
    return run_blocks(ids, Positions(L), cache, nullptr);  // no padding: the plain path
  if (cache) cache->layers.resize(blocks.size());
  // the embed hook, row by row on the real columns; padding columns keep the bare embedding
  const Tensor embedded = tokens.forward(ids);  // [B, T, C]
  std::vector<Tensor> rows_x;
  for (std::int64_t b = 0; b < B; ++b) {
    const std::int64_t skip = std::max<std::int64_t>(padding[b] - L, 0);
    const Tensor row = ag::slice(embedded, 0, b, b + 1);
    const Tensor real = encoding->embed(ag::slice(row, 1, skip, T),
                                        Positions(std::max<std::int64_t>(rows.first(b) + skip, 0)));
    rows_x.push_back(skip > 0 ? ag::concat({ag::slice(row, 1, 0, skip), real}, 1) : real);
  }
  Tensor x = ag::concat(rows_x, 0);
  for (std::size_t i = 0; i < blocks.size(); ++i)
    x = blocks[i]->forward(x, rows, cache ? &cache->layers[i] : nullptr);
  return x;
}

Tensor Decoder::forward(const ag::Indices& ids, const RowStarts& rows, KVCache* cache) {
  return head.forward(final_norm.forward(run_padded_blocks(ids, rows, cache)));
}
// [padded-decoder]

std::vector<Tensor> Decoder::hidden_states(const ag::Indices& ids) {
  std::vector<Tensor> hidden;
  run_blocks(ids, 0, nullptr, &hidden);
  return hidden;
}

void Decoder::capture_attention(bool on) {
  for (auto& block : blocks) block->attention.capture_weights = on;
}

std::vector<Tensor> Decoder::attention_weights() const {
  std::vector<Tensor> weights;
  for (const auto& block : blocks) weights.push_back(block->attention.last_weights);
  return weights;
}

}  // namespace pe
