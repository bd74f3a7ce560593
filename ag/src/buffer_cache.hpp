// Where tensors' value buffers come from and go back to (ag/buffers.hpp says why). Private to
// the framework: Storage (impl.hpp) is its one user.
#pragma once
#include <cstddef>

namespace ag::buffer_cache {

/// Every buffer starts on a cache line, which is more than any SIMD load needs (xtensor's
/// allocator, used before the cache, aligned to the build's SIMD width: 16 bytes on SSE2).
inline constexpr std::size_t kAlignment = 64;

/// The size of the buffer that holds `bytes` of values: rounded up to a whole number of
/// cache lines, at least one (so that even an empty tensor has a buffer to point at).
std::size_t buffer_size(std::size_t bytes);

/// A buffer of `size` bytes (a buffer_size()) with unspecified contents: the newest cached
/// one of that size, or a new one. Safe to call from any thread; throws std::bad_alloc.
void* take(std::size_t size);

/// Gives back a buffer from take(), with its size; any thread may give back any buffer.
void give_back(void* buffer, std::size_t size) noexcept;

}  // namespace ag::buffer_cache
