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
enum class Dtype { f32, f64 };
const char* dtype_name(Dtype dtype);

using Shape = std::vector<std::int64_t>;
std::int64_t numel(const Shape& shape);

struct TensorImpl;  // defined in src/, where xtensor lives
struct Node;

/// A handle: copying a Tensor copies the handle, not the data. Two handles to the same
/// tensor see the same values and the same gradient.
class Tensor {
 public:
  Tensor();  ///< an empty handle; most calls on it throw
  explicit Tensor(std::shared_ptr<TensorImpl> impl);

  bool defined() const { return impl_ != nullptr; }
  const Shape& shape() const;
  std::int64_t dim() const;
  std::int64_t size(std::int64_t axis) const;  ///< negative axes count from the end
  std::int64_t numel() const;
  Dtype dtype() const;

  /// Pointer to the first element, row-major and contiguous. Throws if T is not the dtype.
  template <class T> T* data();
  template <class T> const T* data() const;
  /// Element values converted to double, for printing and tests.
  std::vector<double> to_vector() const;
  double item() const;  ///< the value of a one-element tensor
  double at(const std::vector<std::int64_t>& index) const;

  // --- autograd -----------------------------------------------------------------------
  bool requires_grad() const;
  /// Marks a leaf as a parameter to differentiate. Throws on a non-leaf.
  Tensor& set_requires_grad(bool flag = true);
  bool is_leaf() const;  ///< made by the user, not by an op
  /// The accumulated gradient of a leaf (same shape and dtype), or an undefined Tensor.
  Tensor grad() const;
  void zero_grad();
  /// Reverse-mode sweep from this tensor. A non-scalar needs a seed gradient of its shape.
  /// May be called again on the same graph: leaf gradients add up, nothing else changes.
  void backward() const;
  void backward(const Tensor& seed) const;
  /// The same values, cut from the tape: no gradient flows through the result.
  Tensor detach() const;
  /// The op that made this tensor ("matmul", "add", ...), or "leaf".
  std::string op_name() const;
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
  Tensor& set_name(std::string name);
  TensorImpl& impl() const;
  const std::shared_ptr<TensorImpl>& impl_ptr() const { return impl_; }

 private:
  std::shared_ptr<TensorImpl> impl_;
};

// --- making tensors ---------------------------------------------------------------------
Tensor zeros(const Shape& shape, Dtype dtype = Dtype::f32);
Tensor ones(const Shape& shape, Dtype dtype = Dtype::f32);
Tensor full(const Shape& shape, double value, Dtype dtype = Dtype::f32);
Tensor scalar(double value, Dtype dtype = Dtype::f32);  ///< shape []
/// Values in row-major order; their count must equal the shape's.
Tensor from_vector(const std::vector<double>& values, const Shape& shape,
                   Dtype dtype = Dtype::f32);
/// 0, 1, ..., n-1 as shape [n].
Tensor arange(std::int64_t n, Dtype dtype = Dtype::f32);

std::string shape_string(const Shape& shape);  ///< "[2, 3, 4]"
std::ostream& operator<<(std::ostream& out, const Tensor& tensor);

/// While one of these lives, ops on this thread record no tape (evaluation, optimisers).
class NoGradGuard {
 public:
  NoGradGuard();
  ~NoGradGuard();
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool previous_;
};
bool grad_enabled();

}  // namespace ag
