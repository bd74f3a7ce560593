// The buffer cache (ag/buffers.hpp): a tensor's buffer is taken again after its tensor dies,
// the cache stays under its cap and drops the oldest buffers first, a reused buffer is still
// filled where the maker asks, threads make and free tensors at once, and tensor_bytes() counts
// what tensors ask for, not what the cache keeps.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "ag/buffers.hpp"
#include "ag/src/buffer_cache.hpp"
#include "ag/tensor.hpp"
#include "ag/tensor_bytes.hpp"

using namespace ag;

TEST(BufferCache, ATensorTakesTheBufferOfOneThatDied) {
  release_cached_buffers();
  const float* first = nullptr;
  {
    Tensor t = full({1000}, 3.0);
    first = t.data<float>();
  }
  const BufferCounts before = buffer_counts();
  EXPECT_EQ(before.cached, 1);
  EXPECT_EQ(before.cached_bytes, 4032);  // 4000 bytes of values, rounded up to cache lines
  Tensor again = full({1000}, 4.0);
  const BufferCounts after = buffer_counts();
  EXPECT_EQ(again.data<float>(), first);
  EXPECT_EQ(after.reused, before.reused + 1);
  EXPECT_EQ(after.from_system, before.from_system);
  EXPECT_EQ(after.cached, 0);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(first) % buffer_cache::kAlignment, 0u);
}

TEST(BufferCache, BuffersAreKeptBySizeInBytesWhateverTheDtype) {
  release_cached_buffers();
  const void* first = nullptr;
  {
    Tensor t = zeros({1000}, Dtype::f32);
    first = t.data<float>();
  }
  Tensor other_size = zeros({999}, Dtype::f32);  // 3996 bytes: also 63 cache lines
  EXPECT_EQ(static_cast<const void*>(other_size.data<float>()), first);
  other_size = Tensor();
  Tensor doubles = zeros({500}, Dtype::f64);  // the same 4000 bytes
  EXPECT_EQ(static_cast<const void*>(doubles.data<double>()), first);
  Tensor larger = zeros({1024}, Dtype::f32);  // nothing cached of its size
  EXPECT_NE(static_cast<const void*>(larger.data<float>()), first);
}

TEST(BufferCache, ReleasingTheCacheGivesEveryBufferBack) {
  { Tensor a = zeros({100}), b = zeros({200}), c = zeros({300}); }
  EXPECT_GE(buffer_counts().cached, 3);
  release_cached_buffers();
  const BufferCounts released = buffer_counts();
  EXPECT_EQ(released.cached, 0);
  EXPECT_EQ(released.cached_bytes, 0);
  Tensor d = zeros({100});
  EXPECT_EQ(buffer_counts().from_system, released.from_system + 1);
}

// A reused buffer holds the values of the tensor that had it; the makers that promise values
// must still write every one.
TEST(BufferCache, ZerosFullAndCopiesOfAReusedBufferHoldTheirOwnValues) {
  const std::vector<double> values = {1.5, -2.0, 3.25, 7.0, 0.5};
  for (Dtype dtype : {Dtype::f32, Dtype::f64}) {
    release_cached_buffers();
    { Tensor old = full({5}, 123.0, dtype), older = full({5}, 456.0, dtype); }  // two cached
    const std::int64_t reused = buffer_counts().reused;
    Tensor z = zeros({5}, dtype);
    EXPECT_EQ(buffer_counts().reused, reused + 1);
    EXPECT_EQ(z.to_vector(), std::vector<double>(5, 0.0));
    z = Tensor();
    Tensor o = ones({5}, dtype);
    EXPECT_EQ(o.to_vector(), std::vector<double>(5, 1.0));
    o = Tensor();
    Tensor v = from_vector(values, {5}, dtype);
    EXPECT_EQ(v.to_vector(), values);
    Tensor copy = v.clone();  // the second cached buffer
    EXPECT_EQ(copy.to_vector(), values);
    EXPECT_EQ(buffer_counts().reused, reused + 4);
  }
}

// Buffers of a quarter of the cap each, all of different sizes, come back one after another:
// the cache may hold at most the cap, so the first ones are dropped and the last ones kept.
TEST(BufferCache, HoldsAtMostItsCapAndDropsTheOldestFirst) {
  { Tensor megabyte = zeros({1 << 18}); }  // the cap: the most bytes in use at once so far
  release_cached_buffers();
  const std::int64_t cap = buffer_counts().cap_bytes;
  ASSERT_GE(cap, std::int64_t(1) << 20);
  const std::size_t quarter = buffer_cache::buffer_size(std::size_t(cap) / 4);
  std::vector<std::size_t> sizes;  // all different, none above a quarter
  for (std::size_t i = 1; i <= 8; ++i) sizes.push_back(quarter - i * buffer_cache::kAlignment);
  void* last = nullptr;
  for (std::size_t size : sizes) {
    last = buffer_cache::take(size);  // not written: only the cache's own links touch it
    buffer_cache::give_back(last, size);
    const BufferCounts counts = buffer_counts();
    EXPECT_LE(counts.cached_bytes, cap);
    EXPECT_EQ(counts.cap_bytes, cap);  // one buffer at a time is never a new most in use
  }
  const BufferCounts after = buffer_counts();
  EXPECT_GE(after.cached, 3);
  EXPECT_LE(after.cached, 4);
  void* newest = buffer_cache::take(sizes.back());
  EXPECT_EQ(newest, last);
  EXPECT_EQ(buffer_counts().reused, after.reused + 1);
  void* oldest = buffer_cache::take(sizes.front());
  EXPECT_EQ(buffer_counts().from_system, after.from_system + 1);
  buffer_cache::give_back(newest, sizes.back());
  buffer_cache::give_back(oldest, sizes.front());
  release_cached_buffers();
}

// Soon several micro-batches of a step run on threads of their own: tensors are made and
// freed on several threads at once, and some die on another thread than their maker's. Each
// tensor keeps its values while it lives (no buffer is handed out twice), and the counts
// come back to where they started. AddressSanitizer and UBSan builds run this too.
TEST(BufferCache, ThreadsMakeAndFreeTensorsAtOnce) {
  const std::int64_t live = tensor_bytes().live;
  const std::int64_t in_use = buffer_counts().in_use_bytes;
  std::mutex mailbox_mutex;
  std::vector<Tensor> mailbox;  // made on one thread, freed on another
  std::atomic<int> wrong_values{0};
  auto work = [&](int thread) {
    const std::int64_t sizes[] = {1, 17, 1000, 4096, 70000};
    for (int i = 0; i < 1000; ++i) {
      const std::int64_t n = sizes[(i + thread) % 5];
      const float value = float(thread * 10000 + i);
      Tensor mine = full({n}, value);
      Tensor theirs;
      {
        std::lock_guard<std::mutex> lock(mailbox_mutex);
        if (!mailbox.empty()) {
          theirs = std::move(mailbox.back());
          mailbox.pop_back();
        }
      }
      theirs = Tensor();  // its buffer goes back from this thread
      const float* p = mine.data<float>();
      if (!std::all_of(p, p + n, [&](float x) { return x == value; })) ++wrong_values;
      if (i % 2) {
        std::lock_guard<std::mutex> lock(mailbox_mutex);
        mailbox.push_back(std::move(mine));
      }
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) threads.emplace_back(work, t);
  for (std::thread& t : threads) t.join();
  mailbox.clear();
  EXPECT_EQ(wrong_values.load(), 0);
  EXPECT_EQ(tensor_bytes().live, live);
  const BufferCounts counts = buffer_counts();
  EXPECT_EQ(counts.in_use_bytes, in_use);
  EXPECT_LE(counts.cached_bytes, counts.cap_bytes);
}

// Chapter 4 and lab/memory.cpp measure algorithms with tensor_bytes(): the bytes of values
// tensors asked for, the same with or without a cache behind them.
TEST(BufferCache, TensorBytesCountsTheValuesNotTheCache) {
  release_cached_buffers();
  const std::int64_t live = tensor_bytes().live;
  {
    Tensor a = zeros({1000});
    EXPECT_EQ(tensor_bytes().live, live + 4000);
  }
  EXPECT_EQ(tensor_bytes().live, live);  // its buffer waits in the cache, uncounted
  EXPECT_EQ(buffer_counts().cached, 1);
  reset_peak_tensor_bytes();
  {
    Tensor b = zeros({1000});  // the cached buffer
    Tensor s = scalar(2.0);    // 4 bytes, in a buffer of a cache line
    EXPECT_EQ(buffer_counts().cached, 0);
    EXPECT_EQ(tensor_bytes().live, live + 4004);
  }
  EXPECT_EQ(tensor_bytes().live, live);
  EXPECT_EQ(tensor_bytes().peak, live + 4004);
}
