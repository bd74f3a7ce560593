// Broadcasting, in one place: the result shape of a binary op, and the reverse step that
// sums a gradient back down to an input's shape.
#include "ag/kernels/elementwise.hpp"
#include "ag/src/impl.hpp"

namespace ag {

Shape broadcast_shapes(const char* op, const Shape& a, const Shape& b) {
  const std::size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (std::size_t i = 0; i < n; ++i) {
    // Align from the right: missing leading axes count as 1.
    const std::int64_t ea = i < n - a.size() ? 1 : a[i - (n - a.size())];
    const std::int64_t eb = i < n - b.size() ? 1 : b[i - (n - b.size())];
    check(ea == eb || ea == 1 || eb == 1, op, "shapes ", shape_string(a), " and ", shape_string(b),
          " cannot be broadcast together");
    out[i] = ea == 1 ? eb : ea;
  }
  return out;
}

bool is_trailing_block(const Shape& big, const Shape& small) {
  if (small.size() > big.size()) return false;
  return std::equal(small.begin(), small.end(), big.end() - small.size());
}

// [unbroadcast]
Tensor unbroadcast(const Tensor& grad, const Shape& shape) {
  if (grad.shape() == shape) return grad;
  // TASK 0.4 begin: sum a gradient back to its input's shape
  const Shape& g = grad.shape();
  // The common case (a bias [C] against [B, T, C]): add up the rows.
  if (is_trailing_block(g, shape) && numel(shape) > 0) {
    Tensor out = zeros(shape, grad.dtype());
    dispatch(grad.dtype(), [&](auto t) {
      using T = decltype(t);
      const std::size_t block = static_cast<std::size_t>(numel(shape));
      const std::size_t rows = static_cast<std::size_t>(grad.numel()) / block;
      const T* src = grad.data<T>();
      T* dst = out.data<T>();
      for (std::size_t r = 0; r < rows; ++r) kernels::axpy(T(1), src + r * block, dst, block);
    });
    return out;
  }
  // General case: sum over the leading axes the input did not have, and over the axes where
  // it had extent 1.
  const std::size_t lead = g.size() - shape.size();
  std::vector<bool> reduced(g.size());
  for (std::size_t i = 0; i < g.size(); ++i)
    reduced[i] = i < lead || (shape[i - lead] == 1 && g[i] != 1);
  Tensor out = empty(shape, grad.dtype());
  sum_axes_into(grad, reduced, out);
  return out;
  // TASK 0.4 end
}
// [unbroadcast]

void sum_axes_into(const Tensor& x, const std::vector<bool>& reduced, Tensor& out) {
  const Shape& shape = x.shape();
  const std::size_t dim = shape.size();
  // out_stride[i]: how far the output index moves when input axis i moves by one
  // (0 for a reduced axis, so all of its elements land on the same output element).
  std::vector<std::int64_t> out_stride(dim, 0);
  std::int64_t stride = 1;
  for (std::size_t i = dim; i-- > 0;)
    if (!reduced[i]) {
      out_stride[i] = stride;
      stride *= shape[i];
    }
  dispatch(x.dtype(), [&](auto t) {
    using T = decltype(t);
    const T* src = x.data<T>();
    T* dst = out.data<T>();
    std::fill_n(dst, out.numel(), T(0));
    std::vector<std::int64_t> index(dim, 0);
    std::int64_t at = 0;
    for (std::int64_t k = 0, n = x.numel(); k < n; ++k) {
      dst[at] += src[k];
      for (std::size_t i = dim; i-- > 0;) {  // odometer increment of the input index
        at += out_stride[i];
        if (++index[i] < shape[i]) break;
        at -= out_stride[i] * shape[i];
        index[i] = 0;
      }
    }
  });
}

}  // namespace ag
