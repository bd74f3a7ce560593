// gather_columns and scatter_add_columns: per row of a batch of matrices, pick columns by an
// index, or add columns into the places an index names. Each is the other's backward rule.
// Relative encodings need them: a score term computed once per distance, then read for every
// (query, key) pair by the pair's distance, without a tensor per pair. gather_interpolated is
// the same reading at fractional positions (CoPE), with a backward rule of its own.
#include <algorithm>
#include <cmath>
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

namespace {

// Where a position reads: the two columns around it after clamping to [0, P-1], and the
// weight of the upper one. A clamped position is an integer, 0 or P-1, so it reads one column
// twice (floor = ceil), like an integer inside: the derivative in p, table[ceil] -
// table[floor], is then 0 without a test of its own.
template <class T>
struct Reading {
  std::int64_t floor, ceil;
  T w;
};

template <class T>
Reading<T> reading(T p, std::int64_t P) {
  const T top = static_cast<T>(P - 1);
  const T clamped = std::min(std::max(p, T(0)), top);
  const T below = std::floor(clamped);
  return {static_cast<std::int64_t>(below), static_cast<std::int64_t>(std::ceil(clamped)),
          clamped - below};
}

}  // namespace

Tensor gather_interpolated(const Tensor& table, const Tensor& positions) {
  profile::Scope profile_scope("gather_interpolated");
  const char* op = "gather_interpolated";
  check_same_dtype(op, table, positions);
  const Shape &ts = table.shape(), &ps = positions.shape();
  check(table.dim() >= 1 && table.dim() == positions.dim() &&
            std::equal(ts.begin(), ts.end() - 1, ps.begin()),
        op, "expected table [..., P] and positions [..., K] with the same leading dims, got ",
        shape_string(ts), " and ", shape_string(ps));
  const std::int64_t P = table.size(-1), K = positions.size(-1);
  check(P >= 1, op, "the table needs at least one position, got ", shape_string(ts));
  const std::int64_t rows = table.numel() / P;
  Tensor out = empty(ps, table.dtype());
  dispatch(table.dtype(), [&](auto t) {
    using T = decltype(t);
    const T* p = positions.data<T>();
    const std::int64_t count = positions.numel();
    for (std::int64_t i = 0; i < count; ++i)
      check(!std::isnan(p[i]), op, "position ", i, " (row ", i / K, ", slot ", i % K, ") is NaN");
    T* o = out.data<T>();
    for (std::int64_t r = 0; r < rows; ++r) {
      const T* row = table.data<T>() + r * P;
      for (std::int64_t k = 0; k < K; ++k) {
        const Reading<T> at = reading(p[r * K + k], P);
        o[r * K + k] = (1 - at.w) * row[at.floor] + at.w * row[at.ceil];
      }
    }
  });
  Tensor table0 = table.detach(), positions0 = positions.detach();
  const bool table_needs = table.requires_grad(), positions_needs = positions.requires_grad();
  return record(op, out, {table, positions}, [=](const Tensor& g) -> std::vector<Tensor> {
    // only the gradients asked for; a loop of scatters like embedding's, not ops
    Tensor d_table = table_needs ? zeros(table0.shape(), g.dtype()) : Tensor();
    Tensor d_positions = positions_needs ? empty(g.shape(), g.dtype()) : Tensor();
    dispatch(g.dtype(), [&](auto t) {
      using T = decltype(t);
      const T *gv = g.data<T>(), *p = positions0.data<T>(), *tv = table0.data<T>();
      T* dt = table_needs ? d_table.data<T>() : nullptr;
      T* dp = positions_needs ? d_positions.data<T>() : nullptr;
      for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t k = 0; k < K; ++k) {
          const std::int64_t i = r * K + k;
          const Reading<T> at = reading(p[i], P);
          if (dt) {
            dt[r * P + at.floor] += (1 - at.w) * gv[i];
            dt[r * P + at.ceil] += at.w * gv[i];
          }
          if (dp) dp[i] = (tv[r * P + at.ceil] - tv[r * P + at.floor]) * gv[i];
        }
    });
    return {d_table, d_positions};
  });
}

}  // namespace ag
