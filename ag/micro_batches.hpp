// A training step as a fixed number of micro-batches, run on threads that each take whole
// micro-batches. Splitting every op between threads (the kernels' own threading) pays a fork
// and a join per op, and leaves the tape walk and the small ops on one thread; a micro-batch
// per thread runs every op of its piece, start to end, with single-threaded kernels and no
// synchronisation at all until the gradients are summed.
//
// The result does not depend on the thread count: each micro-batch's gradients are kept apart
// from the others' (a GradientCapture on the thread that runs it), then summed into the
// leaves in the order of the micro-batches, 0, 1, 2, ..., whichever thread computed them.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "ag/ops.hpp"
#include "ag/tensor.hpp"

namespace ag {

/// At most this many micro-batches per step: enough for 1, 2 or 4 threads to share evenly
/// (3 threads take 2, 1 and 1), few enough that each product keeps hundreds of rows.
inline constexpr std::int64_t kMaxMicroBatches = 4;
/// A micro-batch has at least this many tokens (rows of its products), so that a small batch
/// is not cut into products too small to run near the peak.
inline constexpr std::int64_t kMinMicroBatchTokens = 256;

/// The number of micro-batches a step of `sequences` sequences of `length` tokens is cut into:
/// as many as the tokens allow at kMinMicroBatchTokens each, at most kMaxMicroBatches and at
/// most one per sequence, at least 1. It depends on the batch's shape alone, never on the
/// thread count, so that a step is the same sums at any thread count. 64 x 32 gives 4; a
/// single sequence gives 1 (its ops are split between threads instead).
std::int64_t micro_batch_count(std::int64_t sequences, std::int64_t length);

/// Micro-batch `index` of `count`'s share of `sequences` sequences: [first, end), the shares
/// as even as whole sequences allow (sizes differ by at most one).
struct MicroBatchRows {
  std::int64_t first;  ///< its first sequence
  std::int64_t end;    ///< one past its last
};
/// Micro-batch `index` of `count`'s sequences, out of `sequences`.
MicroBatchRows micro_batch_rows(std::int64_t sequences, std::int64_t count, std::int64_t index);
/// Sequences [rows.first, rows.end) of a batch of ids or targets [B, ...]: the same trailing
/// axes, rows.end - rows.first of them. Throws ag::Error unless 0 <= first <= end <= B.
Indices rows_of(const Indices& batch, MicroBatchRows rows);

/// One micro-batch's loss and its weight in the step's loss: the step minimises
/// sum_i weight_i * loss_i (for a mean over all the step's targets, weight_i is the share of
/// the targets that micro-batch i holds).
struct WeightedLoss {
  Tensor loss;        ///< a one-element tensor on the tape
  double weight = 1;  ///< its factor in the step's loss (the seed of its backward sweep)
};

/// Runs micro-batches 0 .. count-1: for each, `piece(i)` builds the forward pass and returns
/// its loss, whose backward sweep follows at once (an undefined loss: a micro-batch with nothing
/// to learn from, which adds nothing). Then every leaf's gradient is increased by
/// the sum over i of weight_i * d loss_i / d leaf, added in the order of i. Returns
/// sum_i weight_i * loss_i, likewise in the order of i.
///
/// With max_threads() > 1 and count > 1 the micro-batches run on min(max_threads(), count)
/// threads, each micro-batch whole on one thread with single-threaded kernels; otherwise one
/// after the other on this thread, each op's kernels free to use max_threads(). The result is the
/// same bits either way, at any thread count. `piece` must therefore be safe to call from
/// several threads at once (read shared state, write only what it makes). An exception from
/// any micro-batch is rethrown here (the lowest-numbered one's), after every thread is done and
/// before any leaf's gradient changes. Throws ag::Error for count < 1.
double accumulate_micro_batches(std::int64_t count,
                                const std::function<WeightedLoss(std::int64_t)>& piece);

/// The gradients that backward sweeps sent to leaves, kept here instead of in the leaves
/// (Tensor::grad()) while a CaptureGradients scope names this object: the micro-batches'
/// gradients stay apart until they are summed in a fixed order. accumulate_micro_batches
/// uses one per micro-batch; it is public for tests and for a training loop of its own.
class GradientCapture {
 public:
  /// A leaf and the gradient the sweeps sent it.
  struct Entry {
    Tensor leaf;      ///< the leaf (a handle to it)
    Tensor gradient;  ///< the sum of what reached it, in the order it arrived
  };
  /// The leaves that received a gradient, in the order of their first arrival.
  const std::vector<Entry>& entries() const { return entries_; }
  /// Adds `increment` to what `leaf` has received (the engine calls this for every leaf
  /// gradient of a sweep run inside a CaptureGradients scope).
  void add(const Tensor& leaf, const Tensor& increment);

 private:
  std::vector<Entry> entries_;
};

/// While one of these lives, backward sweeps run on this thread send leaf gradients to the
/// capture it names.
class CaptureGradients {
 public:
  explicit CaptureGradients(GradientCapture& capture);  ///< starts capturing on this thread
  ~CaptureGradients();  ///< restores the capture found at construction (if any)
  CaptureGradients(const CaptureGradients&) = delete;
  CaptureGradients& operator=(const CaptureGradients&) = delete;

 private:
  GradientCapture* previous_;
};

/// The capture that backward sweeps on this thread send leaf gradients to, or null.
GradientCapture* current_gradient_capture();

/// Adds the captured gradients into their leaves' gradients (Tensor::grad()), capture after
/// capture in the order given: for every leaf, ((g_0 + g_1) + g_2) + ..., then added to what
/// the leaf held already (or becoming its gradient if it held none).
void add_captured_gradients(const std::vector<GradientCapture>& captures);

}  // namespace ag
