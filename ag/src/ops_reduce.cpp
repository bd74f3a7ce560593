// Reductions: sum, mean and max over axes. Their gradients spread the incoming gradient
// back over the axes that were reduced. The sums are our own loop (sum_axes_into), and max
// keeps one too, because its backward needs where each maximum was.
#include <algorithm>

#include "ag/ops.hpp"
#include "ag/profile.hpp"
#include "ag/src/impl.hpp"

namespace ag {

namespace {

std::vector<std::int64_t> normalize_axes(const char* op, std::vector<std::int64_t> axes,
                                         std::int64_t dim) {
  for (auto& axis : axes) axis = normalize_axis(op, axis, dim);
  std::sort(axes.begin(), axes.end());
  check(std::adjacent_find(axes.begin(), axes.end()) == axes.end(), op, "an axis is listed twice");
  return axes;
}

Shape reduced_shape(const Shape& shape, const std::vector<std::int64_t>& axes, bool keepdim) {
  Shape out;
  for (std::int64_t i = 0; i < static_cast<std::int64_t>(shape.size()); ++i) {
    const bool reduced = std::binary_search(axes.begin(), axes.end(), i);
    if (!reduced)
      out.push_back(shape[i]);
    else if (keepdim)
      out.push_back(1);
  }
  return out;
}

// g (shape with the reduced axes kept as 1) repeated along those axes up to `shape`. A
// plain loop over the rows of the result: xtensor's broadcast assignment was 10x slower.
Tensor broadcast_to(const Tensor& g, const Shape& shape) {
  Tensor out = empty(shape, g.dtype());
  const std::size_t dim = shape.size();
  if (out.numel() == 0) return out;
  if (dim == 0) return g.clone();
  std::vector<std::int64_t> strides(dim, 0);  // g's stride along each axis; 0 where repeated
  for (std::int64_t i = std::int64_t(dim) - 1, stride = 1; i >= 0; --i) {
    if (g.shape()[i] != 1) strides[i] = stride;
    stride *= g.shape()[i];
  }
  dispatch(g.dtype(), [&](auto t) {
    using T = decltype(t);
    const T* from = g.data<T>();
    T* to = out.data<T>();
    const std::int64_t inner = shape[dim - 1], inner_stride = strides[dim - 1];
    std::vector<std::int64_t> index(dim, 0);
    std::int64_t at = 0;  // g's offset of the current row
    for (std::int64_t r = 0, rows = out.numel() / inner; r < rows; ++r, to += inner) {
      if (inner_stride == 1)
        std::copy(from + at, from + at + inner, to);
      else
        std::fill(to, to + inner, from[at]);
      for (std::size_t i = dim - 1; i-- > 0;) {  // advance over the outer axes of the result
        at += strides[i];
        if (++index[i] < shape[i]) break;
        at -= strides[i] * shape[i];
        index[i] = 0;
      }
    }
  });
  return out;
}

}  // namespace

Tensor sum(const Tensor& x, std::vector<std::int64_t> axes, bool keepdim) {
  profile::Scope profile_scope("sum");
  axes = normalize_axes("sum", std::move(axes), x.dim());
  const Shape kept = reduced_shape(x.shape(), axes, true);
  Tensor out = empty(reduced_shape(x.shape(), axes, keepdim), x.dtype());
  std::vector<bool> reduced(static_cast<std::size_t>(x.dim()), false);
  for (auto axis : axes) reduced[axis] = true;
  sum_axes_into(x, reduced, out);
  const Shape shape = x.shape();
  return record("sum", out, {x}, [kept, shape](const Tensor& g) -> std::vector<Tensor> {
    return {broadcast_to(alias(g, kept), shape)};
  });
}

Tensor sum(const Tensor& x) {
  profile::Scope profile_scope("sum");
  std::vector<std::int64_t> all(static_cast<std::size_t>(x.dim()));
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<std::int64_t>(i);
  return sum(x, all, false);
}

Tensor mean(const Tensor& x, std::vector<std::int64_t> axes, bool keepdim) {
  profile::Scope profile_scope("mean");
  axes = normalize_axes("mean", std::move(axes), x.dim());
  std::int64_t count = 1;
  for (auto axis : axes) count *= x.shape()[axis];
  check(count > 0, "mean", "of an empty set of elements (shape ", shape_string(x.shape()), ")");
  return mul(sum(x, axes, keepdim), 1.0 / double(count));
}

Tensor mean(const Tensor& x) {
  profile::Scope profile_scope("mean");
  check(x.numel() > 0, "mean", "of an empty tensor");
  return mul(sum(x), 1.0 / double(x.numel()));
}

Tensor max(const Tensor& x, std::int64_t axis, bool keepdim) {
  profile::Scope profile_scope("max");
  axis = normalize_axis("max", axis, x.dim());
  const std::int64_t n = x.shape()[axis];
  check(n > 0, "max", "over an empty axis ", axis, " of shape ", shape_string(x.shape()));
  // View x as [outer, n, inner] and scan the middle axis.
  std::int64_t outer = 1, inner = 1;
  for (std::int64_t i = 0; i < axis; ++i) outer *= x.shape()[i];
  for (std::int64_t i = axis + 1; i < x.dim(); ++i) inner *= x.shape()[i];
  Tensor out = empty(reduced_shape(x.shape(), {axis}, keepdim), x.dtype());
  auto argmax = std::make_shared<std::vector<std::int64_t>>(outer * inner);
  dispatch(x.dtype(), [&](auto t) {
    using T = decltype(t);
    const T* src = x.data<T>();
    T* dst = out.data<T>();
    for (std::int64_t o = 0; o < outer; ++o)
      for (std::int64_t i = 0; i < inner; ++i) {
        std::int64_t best = 0;
        for (std::int64_t k = 1; k < n; ++k)
          if (src[(o * n + k) * inner + i] > src[(o * n + best) * inner + i]) best = k;
        (*argmax)[o * inner + i] = best;
        dst[o * inner + i] = src[(o * n + best) * inner + i];
      }
  });
  const Shape shape = x.shape();
  return record("max", out, {x},
                [argmax, shape, outer, inner, n](const Tensor& g) -> std::vector<Tensor> {
                  Tensor gx = zeros(shape, g.dtype());
                  dispatch(g.dtype(), [&](auto t) {
                    using T = decltype(t);
                    const T* src = g.data<T>();
                    T* dst = gx.data<T>();
                    for (std::int64_t o = 0; o < outer; ++o)
                      for (std::int64_t i = 0; i < inner; ++i)
                        dst[(o * n + (*argmax)[o * inner + i]) * inner + i] = src[o * inner + i];
                  });
                  return {gx};
                });
}

}  // namespace ag
