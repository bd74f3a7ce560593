// The buffers that hold tensors' values are recycled: when the last tensor on a buffer dies,
// the buffer goes to a cache, and the next tensor of the same byte size takes it instead of
// asking the allocator. A training step makes and frees the same few hundred tensors every
// time, so after the first step it allocates no tensor memory at all (bench_train_step counts
// it). The cache holds at most as many bytes as the tensors ever held at once (and at most
// 1 GiB), dropping the buffers freed longest ago first: the policy is explained in
// src/buffer_cache.cpp. tensor_bytes() does not count it; it counts what the tensors ask for.
#pragma once
#include <cstdint>

namespace ag {

/// What the buffer cache has done since the program started, and what it holds now.
struct BufferCounts {
  std::int64_t from_system = 0;        ///< buffers the allocator had to provide (cache misses)
  std::int64_t from_system_bytes = 0;  ///< their bytes
  std::int64_t reused = 0;             ///< buffers taken from the cache instead
  std::int64_t reused_bytes = 0;       ///< their bytes
  std::int64_t cached = 0;             ///< buffers in the cache now, waiting for a tensor
  std::int64_t cached_bytes = 0;       ///< their bytes
  std::int64_t in_use_bytes = 0;       ///< bytes of the buffers tensors hold now
  std::int64_t cap_bytes = 0;          ///< the most the cache may hold now (see above)
};

/// The current counts. Safe to call from any thread. Bytes are the buffers' sizes, which
/// round a tensor's values up to a multiple of 64 bytes (tensor_bytes() does not round).
BufferCounts buffer_counts();

/// Gives every cached buffer back to the allocator (tensors alive keep theirs). For a test
/// that needs fresh allocations, or a long program between phases of different sizes.
void release_cached_buffers();

}  // namespace ag
