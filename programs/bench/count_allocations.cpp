#include "programs/bench/count_allocations.hpp"

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <new>

namespace {

std::atomic<std::int64_t> g_calls{0}, g_bytes{0};

// What the standard's operator new does: ask, and on failure call the new-handler until it
// gives up (none: bad_alloc).
void* counted(std::size_t size, std::size_t alignment) {
  g_calls.fetch_add(1, std::memory_order_relaxed);
  g_bytes.fetch_add(std::int64_t(size), std::memory_order_relaxed);
  if (size == 0) size = 1;  // a distinct pointer even for nothing
  for (;;) {
    // aligned_alloc wants a size that is a multiple of the alignment
    void* p = alignment <= alignof(std::max_align_t)
                  ? std::malloc(size)
                  : std::aligned_alloc(alignment, (size + alignment - 1) / alignment * alignment);
    if (p) return p;
    const std::new_handler handler = std::get_new_handler();
    if (!handler) throw std::bad_alloc();
    handler();
  }
}

void* counted_or_null(std::size_t size, std::size_t alignment) noexcept {
  try {
    return counted(size, alignment);
  } catch (...) {
    return nullptr;
  }
}

}  // namespace

namespace bench {
HeapCounts heap_counts() {
  return {g_calls.load(std::memory_order_relaxed), g_bytes.load(std::memory_order_relaxed)};
}
}  // namespace bench

// Every replaceable form, so that none reaches the library's own (uncounted) allocator.
void* operator new(std::size_t size) { return counted(size, 0); }
void* operator new[](std::size_t size) { return counted(size, 0); }
void* operator new(std::size_t size, std::align_val_t alignment) {
  return counted(size, std::size_t(alignment));
}
void* operator new[](std::size_t size, std::align_val_t alignment) {
  return counted(size, std::size_t(alignment));
}
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  return counted_or_null(size, 0);
}
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  return counted_or_null(size, 0);
}
void* operator new(std::size_t size, std::align_val_t alignment, const std::nothrow_t&) noexcept {
  return counted_or_null(size, std::size_t(alignment));
}
void* operator new[](std::size_t size, std::align_val_t alignment, const std::nothrow_t&) noexcept {
  return counted_or_null(size, std::size_t(alignment));
}

void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
