// What a Tensor handle points at. Private to the framework: xtensor stays in src/.
#pragma once
#include <memory>

#include "ag/ops.hpp"
#include "ag/src/xtensor_compat.hpp"
#include "ag/tape.hpp"
#include "ag/tensor.hpp"

namespace ag {

/// Flat, contiguous values. Shapes live in TensorImpl, so reshape and detach can share one
/// Storage. The buffer comes from the buffer cache (src/buffer_cache.hpp) and goes back to it
/// when the last tensor on it dies; a raw buffer rather than an xtensor, since the cache hands
/// out memory whose contents and size are its own, and nothing but data() reads it.
struct Storage {
  Dtype dtype;
  void* values = nullptr;          // 64-byte aligned, `buffer_bytes` long
  std::size_t buffer_bytes = 0;    // what the cache gave (values rounded up to cache lines)
  std::int64_t counted_bytes = 0;  // what empty() added to tensor_bytes().live: the values

  Storage(Dtype dtype, std::int64_t elements);  // uninitialised values
  Storage(const Storage&) = delete;             // one count per buffer
  Storage& operator=(const Storage&) = delete;
  ~Storage();

  template <class T>
  T* data() {
    return static_cast<T*>(values);
  }
};

struct TensorImpl {
  std::shared_ptr<Storage> storage;
  Shape shape;
  bool requires_grad = false;
  std::shared_ptr<TensorImpl> grad;  // leaves only: the accumulated gradient
  std::shared_ptr<Node> grad_fn;     // non-leaves: the op that made this tensor
  std::string name;

  ~TensorImpl();
};

/// A new, uninitialised tensor.
Tensor empty(const Shape& shape, Dtype dtype);
/// A new tensor sharing x's storage under another shape (no tape).
Tensor alias(const Tensor& x, const Shape& shape);

/// total += increment, in place (same shape and dtype). Used to sum gradients.
void add_into(Tensor& total, const Tensor& increment);

/// The shape of a broadcasting binary op's result, or an error naming the op and shapes.
Shape broadcast_shapes(const char* op, const Shape& a, const Shape& b);
/// True if `small` equals the last axes of `big` (a bias against a batch of rows).
bool is_trailing_block(const Shape& big, const Shape& small);
/// Sums a gradient over the axes that broadcasting added, down to `shape`.
Tensor unbroadcast(const Tensor& grad, const Shape& shape);

/// Sums x over the axes marked true in `reduced` (one flag per axis of x) into `out`, whose
/// element count is the product of the kept extents. A plain strided loop, not xt::sum:
/// xtensor 0.24's immediate reducers fail on adapted views and its lazy ones were 100x
/// slower on a bias gradient.
void sum_axes_into(const Tensor& x, const std::vector<bool>& reduced, Tensor& out);

/// Calls f(T{}) with T = float or double, as the dtype says.
template <class F>
decltype(auto) dispatch(Dtype dtype, F&& f) {
  if (dtype == Dtype::f32) return f(float{});
  return f(double{});
}

inline std::vector<std::size_t> xshape(const Shape& shape) {
  return std::vector<std::size_t>(shape.begin(), shape.end());
}

/// An N-d xtensor view on a tensor's values, for code outside the hot paths.
template <class T>
auto xview(const Tensor& t) {
  return xt::adapt(const_cast<T*>(t.data<T>()), static_cast<std::size_t>(t.numel()),
                   xt::no_ownership(), xshape(t.shape()));
}

/// Axis in [-dim, dim) -> [0, dim), or an error naming the op.
std::int64_t normalize_axis(const char* op, std::int64_t axis, std::int64_t dim);
/// Both operands must have the same dtype.
void check_same_dtype(const char* op, const Tensor& a, const Tensor& b);
/// cross_entropy's argument checks, shared by the fused op and its composite: logits [N, V],
/// one target per row in [0, V) or ignore_index, at least one not ignored. Returns how many
/// count.
std::int64_t counted_targets(const Tensor& logits, const Indices& targets,
                             std::int64_t ignore_index);

}  // namespace ag
