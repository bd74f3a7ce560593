#include "ag/src/buffer_cache.hpp"

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <new>
#include <unordered_map>

#include "ag/buffers.hpp"

namespace ag::buffer_cache {
namespace {

// The policy. A buffer that comes back is cached; while the cache then holds more than its cap,
// the buffers that came back longest ago go back to the allocator. The cap is the largest number
// of bytes tensors have held at once so far (never above 1 GiB, the freed memory tensor.cpp lets
// glibc keep), so the cache at most doubles the program's tensor memory at its fullest moment.
// A training step repeats itself: its buffers come back at its end and are all taken again by
// the next step, which then allocates nothing. Evaluation at many lengths makes new sizes at
// each length: the old sizes, unused, age out of the cache as the new ones come back.
constexpr std::size_t kMostCachedBytes = std::size_t(1) << 30;

// Past this many sizes known, the sizes that no cached buffer has are forgotten (see below).
constexpr std::size_t kMostSizes = 4096;

// A cached buffer's first bytes hold its places in two lists: all cached buffers in the order
// they came back (to drop the oldest), and those of its size (to take the newest, whose lines
// may still be in the CPU's caches). With the links inside the buffers, caching a buffer and
// taking one allocate nothing once every size of a step has been seen.
struct FreeBuffer {
  std::size_t size;
  FreeBuffer* older;  // in the list of all cached buffers
  FreeBuffer* newer;
  FreeBuffer* older_same_size;
  FreeBuffer* newer_same_size;
};
static_assert(sizeof(FreeBuffer) <= kAlignment, "a buffer must have room for its links");

void free_list(FreeBuffer* buffer) {  // through the `older` links
  while (buffer) {
    FreeBuffer* next = buffer->older;
    std::free(buffer);
    buffer = next;
  }
}

class Cache {
 public:
  // The newest cached buffer of `size`, or null.
  void* try_take(std::size_t size) {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto found = newest_of_size_.find(size);
    if (found == newest_of_size_.end() || !found->second) return nullptr;
    FreeBuffer* buffer = found->second;
    unlink(buffer);
    counts_.reused += 1;
    counts_.reused_bytes += std::int64_t(size);
    start_using(size);
    return buffer;
  }

  // Counts a buffer that the allocator provided.
  void count_new(std::size_t size) {
    std::lock_guard<std::mutex> lock(mutex_);
    counts_.from_system += 1;
    counts_.from_system_bytes += std::int64_t(size);
    start_using(size);
  }

  void give_back(void* memory, std::size_t size) noexcept {
    FreeBuffer* dropped = nullptr;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      counts_.in_use_bytes -= std::int64_t(size);
      FreeBuffer** newest_same_size = list_of_size(size);
      if (!newest_same_size) {  // no memory for the list's entry: not cached
        std::free(memory);
        return;
      }
      auto* buffer = new (memory) FreeBuffer{size, newest_, nullptr, *newest_same_size, nullptr};
      (newest_ ? newest_->newer : oldest_) = buffer;
      newest_ = buffer;
      if (*newest_same_size) (*newest_same_size)->newer_same_size = buffer;
      *newest_same_size = buffer;
      counts_.cached_bytes += std::int64_t(size);
      counts_.cached += 1;
      while (counts_.cached_bytes > cap()) {
        FreeBuffer* oldest = oldest_;
        unlink(oldest);
        oldest->older = dropped;
        dropped = oldest;
      }
    }
    free_list(dropped);  // outside the lock: returning a large buffer may unmap it
  }

  void release_all() {
    FreeBuffer* all = nullptr;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      all = newest_;
      oldest_ = newest_ = nullptr;
      newest_of_size_.clear();
      counts_.cached = counts_.cached_bytes = 0;
    }
    free_list(all);
  }

  BufferCounts counts() {
    std::lock_guard<std::mutex> lock(mutex_);
    BufferCounts counts = counts_;
    counts.cap_bytes = cap();
    return counts;
  }

 private:
  std::int64_t cap() const { return std::min(most_in_use_, std::int64_t(kMostCachedBytes)); }

  void start_using(std::size_t size) {
    counts_.in_use_bytes += std::int64_t(size);
    most_in_use_ = std::max(most_in_use_, counts_.in_use_bytes);
  }

  // The head of the list of `size`'s cached buffers (made empty if new); null when there is
  // no memory for a new entry. An entry stays when its list empties, since the next step
  // fills it again; only when there are many are the empty ones forgotten, so that a
  // program that makes ever new sizes keeps a bounded map.
  FreeBuffer** list_of_size(std::size_t size) noexcept {
    try {
      if (newest_of_size_.size() >= kMostSizes && !newest_of_size_.count(size))
        std::erase_if(newest_of_size_, [](const auto& entry) { return !entry.second; });
      return &newest_of_size_[size];
    } catch (const std::bad_alloc&) {
      return nullptr;
    }
  }

  // Takes a cached buffer out of both its lists.
  void unlink(FreeBuffer* buffer) {
    (buffer->older ? buffer->older->newer : oldest_) = buffer->newer;
    (buffer->newer ? buffer->newer->older : newest_) = buffer->older;
    if (buffer->older_same_size) buffer->older_same_size->newer_same_size = buffer->newer_same_size;
    if (buffer->newer_same_size)
      buffer->newer_same_size->older_same_size = buffer->older_same_size;
    else
      newest_of_size_[buffer->size] = buffer->older_same_size;  // exists: buffer was its head
    counts_.cached -= 1;
    counts_.cached_bytes -= std::int64_t(buffer->size);
  }

  std::mutex mutex_;  // one lock for all: a step makes a few hundred tensors
  FreeBuffer* oldest_ = nullptr;
  FreeBuffer* newest_ = nullptr;
  std::unordered_map<std::size_t, FreeBuffer*> newest_of_size_;
  BufferCounts counts_;  // its cap_bytes is computed when asked
  std::int64_t most_in_use_ = 0;
};

// Never destroyed: a tensor held by a static object may die after main returns, and its
// buffer must still have a cache to go back to.
Cache& cache() {
  static Cache* const instance = new Cache;
  return *instance;
}

}  // namespace

std::size_t buffer_size(std::size_t bytes) {
  const std::size_t lines = std::max<std::size_t>(1, (bytes + kAlignment - 1) / kAlignment);
  return lines * kAlignment;
}

void* take(std::size_t size) {
  if (void* buffer = cache().try_take(size)) return buffer;
  void* buffer = std::aligned_alloc(kAlignment, size);
  if (!buffer) {  // the cached buffers of other sizes may be what the allocator lacks
    cache().release_all();
    buffer = std::aligned_alloc(kAlignment, size);
  }
  if (!buffer) throw std::bad_alloc();
  cache().count_new(size);
  return buffer;
}

void give_back(void* buffer, std::size_t size) noexcept { cache().give_back(buffer, size); }

}  // namespace ag::buffer_cache

namespace ag {

BufferCounts buffer_counts() { return buffer_cache::cache().counts(); }

void release_cached_buffers() { buffer_cache::cache().release_all(); }

}  // namespace ag
