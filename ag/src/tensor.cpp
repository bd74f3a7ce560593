#include <atomic>
#include <cmath>
#include <iomanip>
#include <limits>
#include <new>
#include <ostream>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "ag/src/buffer_cache.hpp"
#include "ag/src/impl.hpp"
#include "ag/tensor_bytes.hpp"

namespace ag {

const char* dtype_name(Dtype dtype) { return dtype == Dtype::f32 ? "float32" : "float64"; }

std::int64_t numel(const Shape& shape) {
  std::int64_t n = 1;
  for (auto extent : shape)
    // a shape read from a file or a command line must not wrap around to a small count (the
    // message is built only on failure: numel runs in loop conditions)
    if (extent < 0 || __builtin_mul_overflow(n, extent, &n))
      throw Error("numel: shape " + shape_string(shape) +
                  (extent < 0 ? " has a negative extent" : " has too many elements"));
  return n;
}

std::string shape_string(const Shape& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

namespace {

// A shape in an error message, written only when the message is: check()'s parts are
// evaluated on every call, and shape_string allocates for shapes of more than a few axes
// (empty() runs for every tensor a training step makes).
struct ShapeText {
  const Shape& shape;
};
std::ostream& operator<<(std::ostream& out, ShapeText text) {
  return out << shape_string(text.shape);
}

}  // namespace

std::int64_t normalize_axis(const char* op, std::int64_t axis, std::int64_t dim) {
  check(axis >= -dim && axis < dim, op, "axis ", axis, " is out of range for a tensor with ", dim,
        " dimensions");
  return axis < 0 ? axis + dim : axis;
}

void check_same_dtype(const char* op, const Tensor& a, const Tensor& b) {
  check(a.dtype() == b.dtype(), op, "operands have different dtypes (", dtype_name(a.dtype()),
        " and ", dtype_name(b.dtype()), ")");
}

// [release]
// Releasing a long tape the naive way recurses once per node (impl -> node -> input impl ->
// ...), which overflows the stack on deep graphs. Instead, nodes that are about to die are
// moved to an explicit stack and taken apart one at a time.
TensorImpl::~TensorImpl() {
  if (!grad_fn || grad_fn.use_count() > 1) return;
  std::vector<std::shared_ptr<Node>> dying;
  dying.push_back(std::move(grad_fn));
  while (!dying.empty()) {
    std::shared_ptr<Node> node = std::move(dying.back());
    dying.pop_back();
    for (Tensor& input : node->inputs) {
      const auto& impl = input.impl_ptr();
      if (impl && impl.use_count() == 1 && impl->grad_fn && impl->grad_fn.use_count() == 1)
        dying.push_back(std::move(impl->grad_fn));
    }
    node->inputs.clear();
    node->backward = nullptr;
  }
}
// [release]

namespace {

// A training step allocates its activations and gradients (up to megabytes each) and frees
// them all at its end. glibc then hands the freed top of the heap back to the system, and
// the next step takes every page again through a page fault: 10% of a reference step on a
// virtual machine. Keeping up to 1 GB of freed memory in the process makes the next step
// reuse the same pages; buffers above 32 MB (glibc's largest threshold) still come from and
// go back to the system directly. The buffer cache (buffer_cache.cpp) now keeps a step's
// tensor buffers itself; this still serves the buffers it drops and every other allocation.
#ifdef __GLIBC__
const bool kKeepFreedMemory = [] {
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  return true;
}();
#endif

std::atomic<std::int64_t> g_live_bytes{0}, g_peak_bytes{0};

void count_allocation(std::int64_t bytes) {
  const std::int64_t live = g_live_bytes.fetch_add(bytes, std::memory_order_relaxed) + bytes;
  std::int64_t peak = g_peak_bytes.load(std::memory_order_relaxed);
  while (live > peak &&
         !g_peak_bytes.compare_exchange_weak(peak, live, std::memory_order_relaxed)) {
  }
}

}  // namespace

Storage::Storage(Dtype dtype, std::int64_t elements) : dtype(dtype) {
  const std::size_t element_bytes = dtype == Dtype::f32 ? sizeof(float) : sizeof(double);
  std::size_t bytes = 0;
  // more bytes than an address space holds: the allocator's own answer to an impossible size
  if (__builtin_mul_overflow(static_cast<std::size_t>(elements), element_bytes, &bytes) ||
      bytes > std::numeric_limits<std::size_t>::max() / 2)
    throw std::bad_alloc();
  buffer_bytes = buffer_cache::buffer_size(bytes);
  values = buffer_cache::take(buffer_bytes);
  counted_bytes = static_cast<std::int64_t>(bytes);
  count_allocation(counted_bytes);
}

Storage::~Storage() {
  g_live_bytes.fetch_sub(counted_bytes, std::memory_order_relaxed);
  buffer_cache::give_back(values, buffer_bytes);
}

TensorBytes tensor_bytes() {
  return {g_live_bytes.load(std::memory_order_relaxed),
          g_peak_bytes.load(std::memory_order_relaxed)};
}

void reset_peak_tensor_bytes() {
  g_peak_bytes.store(g_live_bytes.load(std::memory_order_relaxed), std::memory_order_relaxed);
}

Tensor empty(const Shape& shape, Dtype dtype) {
  for (auto extent : shape)
    check(extent >= 0, "empty", "negative extent in shape ", ShapeText{shape});
  auto storage = std::make_shared<Storage>(dtype, numel(shape));
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = std::move(storage);
  impl->shape = shape;
  return Tensor(std::move(impl));
}

Tensor alias(const Tensor& x, const Shape& shape) {
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = x.impl().storage;
  impl->shape = shape;
  return Tensor(std::move(impl));
}

Tensor::Tensor() = default;
Tensor::Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

TensorImpl& Tensor::impl() const {
  if (!impl_) throw Error("Tensor: this handle is empty (default-constructed)");
  return *impl_;
}
const Shape& Tensor::shape() const { return impl().shape; }
std::int64_t Tensor::dim() const { return static_cast<std::int64_t>(shape().size()); }
std::int64_t Tensor::size(std::int64_t axis) const {
  return shape()[normalize_axis("Tensor::size", axis, dim())];
}
std::int64_t Tensor::numel() const { return ag::numel(shape()); }
Dtype Tensor::dtype() const { return impl().storage->dtype; }

template <class T>
T* Tensor::data() {
  constexpr Dtype wanted = std::is_same_v<T, float> ? Dtype::f32 : Dtype::f64;
  check(dtype() == wanted, "Tensor::data", "asked for ", dtype_name(wanted), " values of a ",
        dtype_name(dtype()), " tensor");
  return impl().storage->template data<T>();
}
template <class T>
const T* Tensor::data() const {
  return const_cast<Tensor*>(this)->data<T>();
}
template float* Tensor::data<float>();
template double* Tensor::data<double>();
template const float* Tensor::data<float>() const;
template const double* Tensor::data<double>() const;

std::vector<double> Tensor::to_vector() const {
  return dispatch(dtype(), [&](auto t) {
    using T = decltype(t);
    const T* p = data<T>();
    return std::vector<double>(p, p + numel());
  });
}

double Tensor::item() const {
  check(numel() == 1, "item", "needs a one-element tensor, got shape ", ShapeText{shape()});
  return to_vector()[0];
}

double Tensor::at(const std::vector<std::int64_t>& index) const {
  check(index.size() == shape().size(), "at", "index has ", index.size(), " entries for shape ",
        ShapeText{shape()});
  std::int64_t flat = 0;
  for (std::size_t i = 0; i < index.size(); ++i) {
    check(index[i] >= 0 && index[i] < shape()[i], "at", "index ", index[i],
          " out of range for axis ", i, " of shape ", ShapeText{shape()});
    flat = flat * shape()[i] + index[i];
  }
  return dispatch(dtype(), [&](auto t) { return double(data<decltype(t)>()[flat]); });
}

bool Tensor::requires_grad() const { return impl().requires_grad; }
bool Tensor::is_leaf() const { return impl().grad_fn == nullptr; }

Tensor& Tensor::set_requires_grad(bool flag) {
  check(is_leaf(), "set_requires_grad", "only leaves can be marked; this tensor was made by '",
        op_name(), "'");
  impl().requires_grad = flag;
  return *this;
}

Tensor Tensor::grad() const { return impl().grad ? Tensor(impl().grad) : Tensor(); }
void Tensor::zero_grad() { impl().grad.reset(); }

const std::string& Tensor::name() const { return impl().name; }
Tensor& Tensor::set_name(std::string name) {
  impl().name = std::move(name);
  return *this;
}

std::string Tensor::op_name() const { return impl().grad_fn ? impl().grad_fn->op : "leaf"; }
const std::shared_ptr<Node>& Tensor::grad_fn() const { return impl().grad_fn; }

// [detach]
Tensor Tensor::detach() const {
  Tensor out = alias(*this, shape());
  out.impl().name = impl().name;
  return out;
}
// [detach]

Tensor Tensor::to(Dtype target) const {
  Tensor out = empty(shape(), target);
  out.copy_from(*this);
  return out;
}

void Tensor::copy_from(const Tensor& source) {
  check(source.shape() == shape(), "copy_from", "shapes differ: ", ShapeText{source.shape()},
        " into ", ShapeText{shape()});
  const std::int64_t n = numel();
  dispatch(dtype(), [&](auto t) {
    using T = decltype(t);
    T* dst = data<T>();
    dispatch(source.dtype(), [&](auto s) {
      using S = decltype(s);
      const S* src = source.data<S>();
      if constexpr (std::is_same_v<S, T>)
        std::copy(src, src + n, dst);
      else
        for (std::int64_t i = 0; i < n; ++i) dst[i] = static_cast<T>(src[i]);
    });
  });
}

void Tensor::convert_(Dtype target) {
  check(is_leaf(), "convert_", "only leaves can change dtype in place");
  if (target == dtype()) return;
  Tensor converted = to(target);
  impl().storage = converted.impl().storage;
  impl().grad.reset();
}

Tensor Tensor::clone() const { return to(dtype()); }

Tensor zeros(const Shape& shape, Dtype dtype) { return full(shape, 0.0, dtype); }
Tensor ones(const Shape& shape, Dtype dtype) { return full(shape, 1.0, dtype); }

Tensor full(const Shape& shape, double value, Dtype dtype) {
  Tensor out = empty(shape, dtype);
  dispatch(dtype, [&](auto t) {
    using T = decltype(t);
    std::fill_n(out.data<T>(), out.numel(), static_cast<T>(value));
  });
  return out;
}

Tensor scalar(double value, Dtype dtype) { return full({}, value, dtype); }

Tensor from_vector(const std::vector<double>& values, const Shape& shape, Dtype dtype) {
  check(static_cast<std::int64_t>(values.size()) == numel(shape), "from_vector", values.size(),
        " values do not fill shape ", ShapeText{shape});
  Tensor out = empty(shape, dtype);
  dispatch(dtype, [&](auto t) {
    using T = decltype(t);
    std::copy(values.begin(), values.end(), out.data<T>());
  });
  return out;
}

Tensor arange(std::int64_t n, Dtype dtype) {
  std::vector<double> values(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) values[i] = double(i);
  return from_vector(values, {n}, dtype);
}

std::ostream& operator<<(std::ostream& out, const Tensor& tensor) {
  if (!tensor.defined()) return out << "Tensor(undefined)";
  out << "Tensor(" << shape_string(tensor.shape()) << ", " << dtype_name(tensor.dtype());
  const auto values = tensor.to_vector();
  out << ", [";
  const std::size_t shown = std::min<std::size_t>(values.size(), 8);
  for (std::size_t i = 0; i < shown; ++i) out << (i ? ", " : "") << values[i];
  if (values.size() > shown) out << ", ...";
  return out << "])";
}

// [no-grad]
namespace {
thread_local bool g_grad_enabled = true;
}
bool grad_enabled() { return g_grad_enabled; }
NoGradGuard::NoGradGuard() : previous_(g_grad_enabled) { g_grad_enabled = false; }
NoGradGuard::~NoGradGuard() { g_grad_enabled = previous_; }
// [no-grad]

}  // namespace ag
