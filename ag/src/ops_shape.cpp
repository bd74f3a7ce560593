// Ops that move values around without arithmetic: reshape, permute, slice, concat and the
// embedding gather. Their gradients move the incoming gradient back the same way.
// permute, slice and concat are plain copy loops (memcpy where a run is contiguous), because
// xtensor's transpose and strided views copied 15-100x slower (RoPE slices q and k every step).
#include <cstring>
#include <numeric>

#include "ag/kernels/elementwise.hpp"
#include "ag/ops.hpp"
#include "ag/profile.hpp"
#include "ag/src/impl.hpp"

namespace ag {

Tensor reshape(const Tensor& x, Shape shape) {
  profile::Scope profile_scope("reshape");
  std::int64_t known = 1, unknown_at = -1;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      check(unknown_at < 0, "reshape", "more than one -1 in ", shape_string(shape));
      unknown_at = static_cast<std::int64_t>(i);
    } else {
      check(shape[i] >= 0, "reshape", "negative extent in ", shape_string(shape));
      known *= shape[i];
    }
  }
  if (unknown_at >= 0) {
    check(known > 0 && x.numel() % known == 0, "reshape", "cannot infer the -1 in ",
          shape_string(shape), " for ", x.numel(), " elements");
    shape[unknown_at] = x.numel() / known;
  }
  check(numel(shape) == x.numel(), "reshape", "cannot view ", shape_string(x.shape()), " (",
        x.numel(), " elements) as ", shape_string(shape));
  const Shape original = x.shape();
  return record(
      "reshape", alias(x, shape), {x},
      [original](const Tensor& g) -> std::vector<Tensor> { return {alias(g, original)}; });
}

namespace {

// out = x with its axes reordered (out axis i is x axis axes[i]), written in out's order.
// A plain loop over the output rows, the innermost axis as a strided (often contiguous)
// run: xtensor's transpose assignment was 15-80x slower, 7% of an 8-head training step.
template <class T>
void permute_copy(const T* x, const Shape& x_shape, const std::vector<std::int64_t>& axes, T* out) {
  const std::size_t dim = axes.size();
  std::vector<std::int64_t> x_strides(dim, 1);
  for (std::size_t i = dim - 1; i > 0; --i) x_strides[i - 1] = x_strides[i] * x_shape[i];
  Shape shape(dim);
  std::vector<std::int64_t> strides(dim);  // x's stride along each axis of out
  for (std::size_t i = 0; i < dim; ++i) {
    shape[i] = x_shape[axes[i]];
    strides[i] = x_strides[axes[i]];
  }
  const std::int64_t inner = shape[dim - 1], inner_stride = strides[dim - 1];
  if (inner == 0) return;
  const std::int64_t rows = numel(shape) / inner;
  std::vector<std::int64_t> index(dim, 0);  // position among the outer axes of out
  std::int64_t from = 0;                    // x's offset of out's row start
  for (std::int64_t r = 0; r < rows; ++r) {
    T* row = out + r * inner;
    if (inner_stride == 1)
      std::memcpy(row, x + from, sizeof(T) * inner);
    else
      for (std::int64_t j = 0; j < inner; ++j) row[j] = x[from + j * inner_stride];
    for (std::size_t i = dim - 1; i-- > 0;) {  // advance the odometer over the outer axes
      from += strides[i];
      if (++index[i] < shape[i]) break;
      from -= strides[i] * shape[i];
      index[i] = 0;
    }
  }
}

}  // namespace

Tensor permute(const Tensor& x, std::vector<std::int64_t> axes) {
  profile::Scope profile_scope("permute");
  check(static_cast<std::int64_t>(axes.size()) == x.dim(), "permute", "got ", axes.size(),
        " axes for a tensor of shape ", shape_string(x.shape()));
  std::vector<bool> seen(axes.size(), false);
  for (auto& axis : axes) {
    axis = normalize_axis("permute", axis, x.dim());
    check(!seen[axis], "permute", "axis ", axis, " is listed twice");
    seen[axis] = true;
  }
  Shape shape(axes.size());
  for (std::size_t i = 0; i < axes.size(); ++i) shape[i] = x.shape()[axes[i]];
  std::vector<std::int64_t> inverse(axes.size());
  for (std::size_t i = 0; i < axes.size(); ++i) inverse[axes[i]] = static_cast<std::int64_t>(i);
  auto backward = [inverse](const Tensor& g) -> std::vector<Tensor> {
    return {permute(g, inverse)};
  };
  // Moving only axes of extent 1 leaves the memory order unchanged: no copy is needed (the
  // head split of a one-head model is such a permutation).
  std::int64_t last = -1;
  bool order_kept = true;
  for (auto axis : axes)
    if (x.shape()[axis] != 1) {
      order_kept = order_kept && axis > last;
      last = axis;
    }
  if (order_kept) return record("permute", alias(x, shape), {x}, backward);
  Tensor out = empty(shape, x.dtype());
  dispatch(x.dtype(), [&](auto t) {
    using T = decltype(t);
    permute_copy(x.data<T>(), x.shape(), axes, out.data<T>());
  });
  return record("permute", out, {x}, backward);
}

Tensor transpose(const Tensor& x, std::int64_t axis0, std::int64_t axis1) {
  axis0 = normalize_axis("transpose", axis0, x.dim());
  axis1 = normalize_axis("transpose", axis1, x.dim());
  std::vector<std::int64_t> axes(static_cast<std::size_t>(x.dim()));
  std::iota(axes.begin(), axes.end(), 0);
  std::swap(axes[axis0], axes[axis1]);
  return permute(x, axes);
}

namespace {

// x viewed as [outer, n, inner] around `axis`.
struct AxisSplit {
  std::int64_t outer = 1, n = 1, inner = 1;
};
AxisSplit split_at(const Shape& shape, std::int64_t axis) {
  AxisSplit s;
  for (std::int64_t i = 0; i < axis; ++i) s.outer *= shape[i];
  s.n = shape[axis];
  for (std::int64_t i = axis + 1; i < static_cast<std::int64_t>(shape.size()); ++i)
    s.inner *= shape[i];
  return s;
}

// Copies [outer, count, inner] blocks between two tensors split at the same axis:
// dst[:, dst_at + j, :] = src[:, src_at + j, :] for j < count.
void copy_blocks(const Tensor& src, std::int64_t src_n, std::int64_t src_at, Tensor& dst,
                 std::int64_t dst_n, std::int64_t dst_at, std::int64_t outer, std::int64_t count,
                 std::int64_t inner) {
  dispatch(src.dtype(), [&](auto t) {
    using T = decltype(t);
    const T* s = src.data<T>();
    T* d = dst.data<T>();
    for (std::int64_t o = 0; o < outer; ++o)
      std::memcpy(d + (o * dst_n + dst_at) * inner, s + (o * src_n + src_at) * inner,
                  sizeof(T) * count * inner);
  });
}

}  // namespace

Tensor slice(const Tensor& x, std::int64_t axis, std::int64_t start, std::int64_t end) {
  profile::Scope profile_scope("slice");
  axis = normalize_axis("slice", axis, x.dim());
  const std::int64_t n = x.shape()[axis];
  const std::int64_t s = start < 0 ? start + n : start, e = end < 0 ? end + n : end;
  check(0 <= s && s <= e && e <= n, "slice", "range [", start, ", ", end, ") does not fit axis ",
        axis, " of shape ", shape_string(x.shape()));
  Shape shape = x.shape();
  shape[axis] = e - s;
  Tensor out = empty(shape, x.dtype());
  const AxisSplit split = split_at(x.shape(), axis);
  copy_blocks(x, n, s, out, e - s, 0, split.outer, e - s, split.inner);
  const Shape original = x.shape();
  return record("slice", out, {x}, [original, split, s, e](const Tensor& g) -> std::vector<Tensor> {
    Tensor gx = zeros(original, g.dtype());
    copy_blocks(g, e - s, 0, gx, split.n, s, split.outer, e - s, split.inner);
    return {gx};
  });
}

Tensor concat(const std::vector<Tensor>& parts, std::int64_t axis) {
  profile::Scope profile_scope("concat");
  check(!parts.empty(), "concat", "needs at least one tensor");
  const Tensor& first = parts.front();
  axis = normalize_axis("concat", axis, first.dim());
  Shape shape = first.shape();
  shape[axis] = 0;
  for (const Tensor& part : parts) {
    check_same_dtype("concat", first, part);
    Shape a = first.shape(), b = part.shape();
    check(a.size() == b.size(), "concat", "shapes ", shape_string(a), " and ", shape_string(b),
          " have different ranks");
    a[axis] = b[axis] = 0;
    check(a == b, "concat", "shapes ", shape_string(first.shape()), " and ",
          shape_string(part.shape()), " differ outside axis ", axis);
    shape[axis] += part.shape()[axis];
  }
  Tensor out = empty(shape, first.dtype());
  const AxisSplit split = split_at(shape, axis);
  std::vector<std::int64_t> offsets;
  std::int64_t at = 0;
  for (const Tensor& part : parts) {
    offsets.push_back(at);
    copy_blocks(part, part.shape()[axis], 0, out, split.n, at, split.outer, part.shape()[axis],
                split.inner);
    at += part.shape()[axis];
  }
  return record("concat", out, parts,
                [axis, offsets, shape](const Tensor& g) -> std::vector<Tensor> {
                  std::vector<Tensor> grads;
                  for (std::size_t i = 0; i < offsets.size(); ++i) {
                    const std::int64_t end = i + 1 < offsets.size() ? offsets[i + 1] : shape[axis];
                    grads.push_back(slice(g, axis, offsets[i], end));
                  }
                  return grads;
                });
}

Tensor embedding(const Tensor& table, const Indices& ids) {
  profile::Scope profile_scope("embedding");
  check(table.dim() == 2, "embedding", "table must be [V, C], got ", shape_string(table.shape()));
  check(static_cast<std::int64_t>(ids.values.size()) == numel(ids.shape), "embedding",
        ids.values.size(), " ids do not fill shape ", shape_string(ids.shape));
  const std::int64_t V = table.size(0), C = table.size(1);
  for (std::size_t i = 0; i < ids.values.size(); ++i)
    check(ids.values[i] >= 0 && ids.values[i] < V, "embedding", "id ", ids.values[i],
          " at position ", i, " is outside the table's ", V, " rows");
  Shape shape = ids.shape;
  shape.push_back(C);
  Tensor out = empty(shape, table.dtype());
  dispatch(table.dtype(), [&](auto t) {
    using T = decltype(t);
    for (std::size_t i = 0; i < ids.values.size(); ++i)
      std::memcpy(out.data<T>() + i * C, table.data<T>() + ids.values[i] * C, sizeof(T) * C);
  });
  const Shape table_shape = table.shape();
  auto values = std::make_shared<std::vector<std::int64_t>>(ids.values);
  return record("embedding", out, {table},
                [values, table_shape, C](const Tensor& g) -> std::vector<Tensor> {
                  // Scatter-add: a row used twice receives both gradients; unused rows get zero.
                  Tensor gt = zeros(table_shape, g.dtype());
                  dispatch(g.dtype(), [&](auto t) {
                    using T = decltype(t);
                    for (std::size_t i = 0; i < values->size(); ++i)
                      kernels::axpy(T(1), g.data<T>() + i * C, gt.data<T>() + (*values)[i] * C,
                                    static_cast<std::size_t>(C));
                  });
                  return {gt};
                });
}

}  // namespace ag
