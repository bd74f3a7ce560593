// How many bytes the values of the live tensors take, and the most they took at once since a
// chosen moment. It counts what the framework asked for, not what the allocator kept, so it
// measures an algorithm's memory the same way on every system (chapter 4 uses it to show that
// Shaw's terms need no [T, T, D] tensor).
#pragma once
#include <cstdint>

namespace ag {

/// Bytes of tensor values: alive now, and the largest total since reset_peak_tensor_bytes().
struct TensorBytes {
  std::int64_t live = 0;  ///< values of every tensor that exists now (shared storage once)
  std::int64_t peak = 0;  ///< the most `live` has been since the last reset
};

/// The current counts. Safe to call from any thread.
TensorBytes tensor_bytes();
/// Starts a new peak from what is alive now, so that the next peak is the measured region's.
void reset_peak_tensor_bytes();

}  // namespace ag
