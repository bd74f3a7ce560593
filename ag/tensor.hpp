// The Tensor: a cheap handle to shared storage, plus the node of the tape that made it.
//
// Symbols used in shape comments across the book:
//   B batch, T sequence length, C model width, H heads, D head width, V vocabulary.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "ag/error.hpp"

namespace ag {

/// Two element types: float32 to train, float64 to check gradients.
enum class Dtype {
  f32,  ///< float, to train
  f64   ///< double, to check gradients
};
/// "f32" or "f64", for messages and files.
const char* dtype_name(Dtype dtype);

/// The extent of each axis, outermost first: [B, T, C] is {B, T, C}.
using Shape = std::vector<std::int64_t>;
/// The element count of a shape: the product of its extents (1 for the scalar shape []).
std::int64_t numel(const Shape& shape);

struct TensorImpl;  // defined in src/, where xtensor lives
struct Node;

/// A handle: copying a Tensor copies the handle, not the data. Two handles to the same
/// tensor see the same values and the same gradient.
class Tensor {
 public:
  Tensor();  ///< an empty handle; most calls on it throw
  /// A handle to existing storage (the ops in src/ make tensors this way).
  explicit Tensor(std::shared_ptr<TensorImpl> impl);

  /// False for the empty handle of Tensor().
  bool defined() const { return impl_ != nullptr; }
  /// The extent of each axis: [B, T, C] for a batch of sequences.
  const Shape& shape() const;
  /// The number of axes (0 for a scalar).
  std::int64_t dim() const;
  std::int64_t size(std::int64_t axis) const;  ///< negative axes count from the end
  /// The number of elements, the product of the shape.
  std::int64_t numel() const;
  /// The element type, f32 or f64.
  Dtype dtype() const;

  /// Pointer to the first element, row-major and contiguous. Throws if T is not the dtype.
  /// \tparam T float for Dtype::f32, double for Dtype::f64.
  template <class T>
  T* data();
  /// Read-only pointer to the first element. \tparam T float or double, the dtype's type.
  template <class T>
  const T* data() const;
  /// Element values converted to double, for printing and tests.
  std::vector<double> to_vector() const;
  double item() const;  ///< the value of a one-element tensor
  /// One element, converted to double. \param index one entry per axis, each in [0, size).
  double at(const std::vector<std::int64_t>& index) const;

  // --- autograd -----------------------------------------------------------------------
  /// True for a leaf marked to differentiate and for every tensor computed from one.
  bool requires_grad() const;
  /// Marks a leaf as a parameter to differentiate. Throws on a non-leaf.
  Tensor& set_requires_grad(bool flag = true);
  bool is_leaf() const;  ///< made by the user, not by an op
  /// The accumulated gradient of a leaf (same shape and dtype), or an undefined Tensor.
  Tensor grad() const;
  /// Forgets the accumulated gradient of a leaf (the next backward starts from zero).
  void zero_grad();
  /// Reverse-mode sweep from this tensor. A non-scalar needs a seed gradient of its shape.
  /// May be called again on the same graph: leaf gradients add up, nothing else changes.
  void backward() const;
  /// Reverse-mode sweep with an explicit seed: the gradient of some scalar with respect to
  /// this tensor. \param seed the same shape as this tensor.
  void backward(const Tensor& seed) const;
  /// The same values, cut from the tape: no gradient flows through the result.
  Tensor detach() const;
  /// The op that made this tensor ("matmul", "add", ...), or "leaf".
  std::string op_name() const;
  /// The tape node that made this tensor (null for a leaf): its inputs and backward rule.
  const std::shared_ptr<Node>& grad_fn() const;

  /// A new tensor with the same values in another dtype (a leaf, cut from the tape).
  Tensor to(Dtype dtype) const;
  /// Converts a leaf in place, keeping its handle (Module::to uses it so that optimisers
  /// and modules holding this handle see the new values). Drops its gradient.
  void convert_(Dtype dtype);
  /// Copies values from another tensor of the same shape (any dtype) into this one.
  void copy_from(const Tensor& source);
  /// A deep copy of the values (a new leaf).
  Tensor clone() const;

  /// An optional name, shown in graph dumps and gradcheck reports.
  const std::string& name() const;
  /// Sets the name that name() returns; returns this tensor.
  Tensor& set_name(std::string name);
  /// The storage, for the ops in src/ (which see xtensor); throws on an empty handle.
  TensorImpl& impl() const;
  /// The shared storage itself (null for an empty handle): two handles alias when equal.
  const std::shared_ptr<TensorImpl>& impl_ptr() const { return impl_; }

 private:
  std::shared_ptr<TensorImpl> impl_;
};

// --- making tensors ---------------------------------------------------------------------
/// A new leaf of the given shape, filled with 0.
Tensor zeros(const Shape& shape, Dtype dtype = Dtype::f32);
/// A new leaf of the given shape, filled with 1.
Tensor ones(const Shape& shape, Dtype dtype = Dtype::f32);
/// A new leaf of the given shape, every element `value`.
Tensor full(const Shape& shape, double value, Dtype dtype = Dtype::f32);
Tensor scalar(double value, Dtype dtype = Dtype::f32);  ///< shape []
/// Values in row-major order; their count must equal the shape's.
Tensor from_vector(const std::vector<double>& values, const Shape& shape, Dtype dtype = Dtype::f32);
/// 0, 1, ..., n-1 as shape [n].
Tensor arange(std::int64_t n, Dtype dtype = Dtype::f32);

std::string shape_string(const Shape& shape);  ///< "[2, 3, 4]"
/// Prints the shape, the dtype and the values (PyTorch's layout, nested brackets).
std::ostream& operator<<(std::ostream& out, const Tensor& tensor);

/// While one of these lives, ops on this thread record no tape (evaluation, optimisers).
class NoGradGuard {
 public:
  NoGradGuard();   ///< stops recording on this thread
  ~NoGradGuard();  ///< restores the setting found at construction
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool previous_;
};
/// False while a NoGradGuard lives on this thread: ops then record no tape.
bool grad_enabled();

}  // namespace ag
