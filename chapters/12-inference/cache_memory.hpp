// How many bytes a decoder's cache holds per token: standard multi-head attention (every head
// keeps a key and a value), grouped-query attention (G key/value heads shared by the H query
// heads) and DeepSeek's latent attention (one latent and one shared rotary key). The formulas,
// the same numbers measured on small models' real caches, and a table of both.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "chapters/01-attention/decoder.hpp"
#include "chapters/12-inference/latent_attention.hpp"

namespace pe {

/// Cached numbers per token of multi-head attention: 2 L H d_h (a key and a value per head).
std::int64_t mha_cache_elements(std::int64_t layers, std::int64_t heads, std::int64_t head_width);
/// ... of grouped-query attention with G key/value heads: 2 L G d_h (G = H is multi-head,
/// G = 1 multi-query attention).
std::int64_t gqa_cache_elements(std::int64_t layers, std::int64_t kv_heads,
                                std::int64_t head_width);
/// ... of latent attention: L (d_c + d_R), whatever the number of heads.
std::int64_t latent_cache_elements(std::int64_t layers, std::int64_t latent_width,
                                   std::int64_t rotary_width);

/// Bytes per token that the tensors of a cache hold after decoding `tokens` tokens of one
/// sequence: the sum over cached tensors of element count x element size, divided by tokens.
double measured_bytes_per_token(const KVCache& cache, std::int64_t tokens);
/// The same for a latent cache (its latents and rotary keys).
double measured_bytes_per_token(const LatentCache& cache, std::int64_t tokens);
/// What a cache of only `kv_heads` key/value heads would hold per token, measured on a
/// multi-head KVCache by keeping the first kv_heads heads of each layer's keys and values
/// (grouped-query attention caches one key and value per group; which heads they are does
/// not change the bytes). kv_heads must divide the cache's head count.
double measured_grouped_bytes_per_token(const KVCache& cache, std::int64_t kv_heads,
                                        std::int64_t tokens);

/// One row of the cache table.
struct CacheBytesRow {
  std::string model;                     ///< "small (experiment)", "DeepSeek-V3", "Llama-3-8B"
  std::string attention;                 ///< "MHA", "GQA (G = 8)", "MLA (d_c = 512, d_R = 64)"
  std::int64_t elements_per_token = 0;   ///< from the formula, all layers
  std::int64_t bytes_per_element = 0;    ///< 4 for the float32 tensors measured, 2 as served
  double bytes_per_token = 0;            ///< elements x bytes per element
  double measured_bytes_per_token = -1;  ///< from a real cache; -1: not measured
};

/// The sizes of the small models the table measures.
struct SmallCacheSizes {
  std::int64_t layers = 2;         ///< L
  std::int64_t width = 64;         ///< C
  std::int64_t heads = 8;          ///< H (head width C / H = 8)
  std::int64_t kv_heads = 2;       ///< G of the grouped-query row
  std::int64_t latent_width = 16;  ///< d_c
  std::int64_t rotary_width = 8;   ///< d_R
  std::int64_t tokens = 24;        ///< N, the tokens decoded one at a time before measuring
};

/// The table: the small models' three caches measured after decoding N tokens (float32) next to
/// their formula, then DeepSeek-V3 (61 layers, MHA with 128 heads of 128 versus its MLA with
/// d_c = 512 and d_R = 64) and Llama-3-8B (32 layers, 32 query heads of 128, MHA versus its
/// GQA with 8 key/value heads) from the same formulas in 2-byte (bfloat16) elements.
std::vector<CacheBytesRow> cache_bytes_table(const SmallCacheSizes& sizes = {});

/// The rows as a markdown table (bytes per token and, where measured, the measurement).
std::string cache_bytes_markdown(const std::vector<CacheBytesRow>& rows);

}  // namespace pe
