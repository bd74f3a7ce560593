// Micro-batches on threads, and the gradient captures that keep their results apart.
#include "ag/micro_batches.hpp"

#include <algorithm>
#include <exception>
#include <unordered_map>

#include "ag/profile.hpp"
#include "ag/src/impl.hpp"
#include "ag/threads.hpp"

namespace ag {

namespace {
thread_local GradientCapture* t_capture = nullptr;
}  // namespace

std::int64_t micro_batch_count(std::int64_t sequences, std::int64_t length) {
  check(sequences >= 1 && length >= 1, "micro_batch_count", "expected at least one sequence of ",
        "at least one token, got ", sequences, " of ", length);
  const std::int64_t by_tokens = sequences * length / kMinMicroBatchTokens;
  return std::max<std::int64_t>(1, std::min({by_tokens, kMaxMicroBatches, sequences}));
}

MicroBatchRows micro_batch_rows(std::int64_t sequences, std::int64_t count, std::int64_t index) {
  check(count >= 1 && count <= sequences && index >= 0 && index < count, "micro_batch_rows",
        "micro-batch ", index, " of ", count, " over ", sequences, " sequences");
  return {sequences * index / count, sequences * (index + 1) / count};
}

Indices rows_of(const Indices& batch, MicroBatchRows rows) {
  check(!batch.shape.empty() && rows.first >= 0 && rows.first <= rows.end &&
            rows.end <= batch.shape[0],
        "rows_of", "sequences ", rows.first, " to ", rows.end, " of a batch of ",
        batch.shape.empty() ? 0 : batch.shape[0]);
  const std::int64_t per_row = numel(batch.shape) / std::max<std::int64_t>(batch.shape[0], 1);
  Shape shape = batch.shape;
  shape[0] = rows.end - rows.first;
  return {{batch.values.begin() + rows.first * per_row, batch.values.begin() + rows.end * per_row},
          shape};
}

GradientCapture* current_gradient_capture() { return t_capture; }

CaptureGradients::CaptureGradients(GradientCapture& capture) : previous_(t_capture) {
  t_capture = &capture;
}
CaptureGradients::~CaptureGradients() { t_capture = previous_; }

// As the engine does for a leaf's own gradient: the first arrival is kept (a copy when
// something else shares its storage, since later ones are added into it in place).
void GradientCapture::add(const Tensor& leaf, const Tensor& increment) {
  for (Entry& entry : entries_) {
    if (entry.leaf.impl_ptr() == leaf.impl_ptr()) {
      add_into(entry.gradient, increment);
      return;
    }
  }
  const bool owned =
      increment.impl_ptr().use_count() == 1 && increment.impl().storage.use_count() == 1;
  entries_.push_back({leaf, owned ? increment : increment.clone()});
}

// [sum-in-order]
void add_captured_gradients(const std::vector<GradientCapture>& captures) {
  profile::Scope scope("sum micro-batch gradients", profile::Phase::backward);
  // Each leaf's running total, in the order of the captures. Different leaves never mix, so
  // the order in which leaves are visited does not matter; the order of the captures does.
  std::unordered_map<TensorImpl*, Tensor> totals;
  std::vector<Tensor> leaves;  // in the order of first arrival, to finish them below
  for (const GradientCapture& capture : captures) {
    for (const GradientCapture::Entry& entry : capture.entries()) {
      Tensor& total = totals[entry.leaf.impl_ptr().get()];
      if (!total.defined()) {
        total = entry.gradient;  // a capture's own storage (GradientCapture::add)
        leaves.push_back(entry.leaf);
      } else {
        add_into(total, entry.gradient);
      }
    }
  }
  for (const Tensor& leaf : leaves) {
    const Tensor& total = totals[leaf.impl_ptr().get()];
    if (Tensor held = leaf.grad(); held.defined())
      add_into(held, total);
    else
      leaf.impl().grad = total.impl_ptr();
  }
}
// [sum-in-order]

double accumulate_micro_batches(std::int64_t count,
                                const std::function<WeightedLoss(std::int64_t)>& piece) {
  check(count >= 1, "accumulate_micro_batches", "expected at least 1 micro-batch, got ", count);
  std::vector<GradientCapture> captures(static_cast<std::size_t>(count));
  std::vector<double> losses(static_cast<std::size_t>(count), 0.0);
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(count));
  // [micro-batch-loop]
  const auto run = [&](std::int64_t i) {
    const auto k = static_cast<std::size_t>(i);
    try {
      CaptureGradients capture(captures[k]);
      WeightedLoss weighted = piece(i);
      if (!weighted.loss.defined()) return;  // nothing to learn from in this one
      check(weighted.loss.numel() == 1, "accumulate_micro_batches", "micro-batch ", i,
            " returned a loss that is not one number");
      losses[k] = weighted.weight * weighted.loss.item();
      weighted.loss.backward(full(weighted.loss.shape(), weighted.weight, weighted.loss.dtype()));
    } catch (...) {
      errors[k] = std::current_exception();
    }
  };
  const int threads = static_cast<int>(std::min<std::int64_t>(max_threads(), count));
  if (threads > 1) {
    // Dynamic: a thread that finishes early takes the next micro-batch. Which thread runs
    // which changes nothing in the result.
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
    for (std::int64_t i = 0; i < count; ++i) run(i);
  } else {
    for (std::int64_t i = 0; i < count; ++i) run(i);
  }
  for (const std::exception_ptr& error : errors)
    if (error) std::rethrow_exception(error);
  add_captured_gradients(captures);
  // [micro-batch-loop]
  double total = 0;
  for (double loss : losses) total += loss;
  return total;
}

}  // namespace ag
