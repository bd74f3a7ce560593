// gather_columns and scatter_add_columns: per row of a batch of matrices, pick columns by an
// index, or add columns into the places an index names. Each is the other's backward rule.
// Relative encodings need them: a score term computed once per distance, then read for every
// (query, key) pair by the pair's distance, without a tensor per pair.
#include <memory>

#include "ag/ops.hpp"
#include "ag/profile.hpp"
#include "ag/src/impl.hpp"

namespace ag {

namespace {

// The sizes both ops share: x [..., M, x_columns] and index [M, N], every index in [0, columns).
struct ColumnPlan {
  std::int64_t batch, rows, slots;  // leading positions, M, N
};

ColumnPlan plan_columns(const char* op, const Tensor& x, std::int64_t x_columns,
                        const Indices& index, std::int64_t columns) {
  check(index.shape.size() == 2 &&
            static_cast<std::int64_t>(index.values.size()) == numel(index.shape),
        op, "index must be [M, N] with M*N values, got ", index.values.size(), " values for ",
        shape_string(index.shape));
  const std::int64_t M = index.shape[0], N = index.shape[1];
  check(x.dim() >= 2 && x.size(-2) == M && x.size(-1) == x_columns, op, "expected x [..., ", M,
        ", ", x_columns, "] for an index ", shape_string(index.shape), ", got ",
        shape_string(x.shape()));
  for (std::size_t i = 0; i < index.values.size(); ++i)
    check(index.values[i] >= 0 && index.values[i] < columns, op, "index ", index.values[i],
          " at row ", std::int64_t(i) / N, ", slot ", std::int64_t(i) % N, " is outside the ",
          columns, " columns");
  return {M * x_columns == 0 ? 0 : x.numel() / (M * x_columns), M, N};
}

template <class T>
void gather_rows(const T* x, const std::int64_t* index, const ColumnPlan& p, std::int64_t from,
                 T* out) {
  for (std::int64_t b = 0; b < p.batch; ++b)
    for (std::int64_t i = 0; i < p.rows; ++i) {
      const T* row = x + (b * p.rows + i) * from;
      const std::int64_t* pick = index + i * p.slots;
      T* o = out + (b * p.rows + i) * p.slots;
      for (std::int64_t j = 0; j < p.slots; ++j) o[j] = row[pick[j]];
    }
}

// out must be zero. Each row adds its slots in their order, one thread: the same sums every run.
template <class T>
void scatter_add_rows(const T* x, const std::int64_t* index, const ColumnPlan& p,
                      std::int64_t width, T* out) {
  for (std::int64_t b = 0; b < p.batch; ++b)
    for (std::int64_t i = 0; i < p.rows; ++i) {
      const T* row = x + (b * p.rows + i) * p.slots;
      const std::int64_t* place = index + i * p.slots;
      T* o = out + (b * p.rows + i) * width;
      for (std::int64_t j = 0; j < p.slots; ++j) o[place[j]] += row[j];
    }
}

Shape with_last(Shape shape, std::int64_t last) {
  shape.back() = last;
  return shape;
}

Tensor scatter_with(const Tensor& x, std::shared_ptr<const Indices> index, const ColumnPlan& p,
                    std::int64_t width);

Tensor gather_with(const Tensor& x, std::shared_ptr<const Indices> index, const ColumnPlan& p,
                   std::int64_t from) {
  profile::Scope profile_scope("gather_columns");
  Tensor out = empty(with_last(x.shape(), p.slots), x.dtype());
  dispatch(x.dtype(), [&](auto t) {
    using T = decltype(t);
    gather_rows(x.data<T>(), index->values.data(), p, from, out.data<T>());
  });
  return record("gather_columns", out, {x},
                [index, p, from](const Tensor& g) -> std::vector<Tensor> {
                  return {scatter_with(g, index, p, from)};
                });
}

Tensor scatter_with(const Tensor& x, std::shared_ptr<const Indices> index, const ColumnPlan& p,
                    std::int64_t width) {
  profile::Scope profile_scope("scatter_add_columns");
  Tensor out = zeros(with_last(x.shape(), width), x.dtype());
  dispatch(x.dtype(), [&](auto t) {
    using T = decltype(t);
    scatter_add_rows(x.data<T>(), index->values.data(), p, width, out.data<T>());
  });
  return record("scatter_add_columns", out, {x},
                [index, p, width](const Tensor& g) -> std::vector<Tensor> {
                  return {gather_with(g, index, p, width)};
                });
}

}  // namespace

Tensor gather_columns(const Tensor& x, const Indices& index) {
  check(x.dim() >= 2, "gather_columns", "expected x [..., M, R], got ", shape_string(x.shape()));
  const std::int64_t from = x.size(-1);
  const ColumnPlan p = plan_columns("gather_columns", x, from, index, from);
  return gather_with(x, std::make_shared<const Indices>(index), p, from);
}

Tensor scatter_add_columns(const Tensor& x, const Indices& index, std::int64_t width) {
  check(width >= 1, "scatter_add_columns", "width must be at least 1, got ", width);
  check(index.shape.size() == 2, "scatter_add_columns", "index must be [M, N], got ",
        shape_string(index.shape));
  const ColumnPlan p = plan_columns("scatter_add_columns", x, index.shape[1], index, width);
  return scatter_with(x, std::make_shared<const Indices>(index), p, width);
}

}  // namespace ag
