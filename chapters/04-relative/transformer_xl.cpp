#include "transformer_xl.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "sinusoidal.hpp"

namespace pe {

using ag::Tensor;

// [xl-sinusoid]
Tensor relative_sinusoid(std::int64_t first, std::int64_t count, std::int64_t width,
                         ag::Dtype dtype) {
  ag::check(count >= 1, "xl", "needs at least one distance, got ", count);
  const std::int64_t last = first + count - 1;
  const std::int64_t farthest = std::max(std::abs(first), std::abs(last));
  // rows 0 .. farthest of chapter 2's table: sin at even columns, cos at odd ones
  const std::vector<double> table =
      sinusoidal_table(farthest + 1, width, 10000, SinusoidalLayout::interleaved, ag::Dtype::f64)
          .to_vector();
  std::vector<double> rows(static_cast<std::size_t>(count * width));
  for (std::int64_t r = 0; r < count; ++r) {
    const std::int64_t distance = first + r, magnitude = std::abs(distance);
    for (std::int64_t c = 0; c < width; ++c) {
      const double value = table[magnitude * width + c];
      rows[r * width + c] = distance < 0 && c % 2 == 0 ? -value : value;  // sin(-x) = -sin(x)
    }
  }
  return ag::from_vector(rows, {count, width}, dtype);
}
// [xl-sinusoid]

// [xl-position-term]
Tensor xl_position_term(const Tensor& query, const Tensor& projected, std::int64_t keys) {
  ag::check(query.dim() == 4 && projected.dim() == 3 && query.size(1) == projected.size(0) &&
                query.size(3) == projected.size(2) && projected.size(1) == query.size(2) + keys - 1,
            "xl", "expected query [B, H, Tq, D] and projected [H, Tq + Tk - 1, D] with Tk = ", keys,
            ", got ", ag::shape_string(query.shape()), " and ",
            ag::shape_string(projected.shape()));
  const std::int64_t B = query.size(0), H = query.size(1), Tq = query.size(2), D = query.size(3),
                     N = projected.size(1);
  // every query against every distance: [H, B*Tq, N], only Tq + Tk - 1 vectors per head
  const Tensor by_head = ag::reshape(ag::permute(query, {1, 0, 2, 3}), {H, B * Tq, D});
  const Tensor all = ag::matmul_transposed(by_head, projected);
  // then pick, for the pair (i, j), the column of its distance: r = i - j + Tk - 1 (the
  // "relative shift" of the paper, done as a gather of rows)
  const Tensor rows =
      ag::reshape(ag::permute(ag::reshape(all, {H, B, Tq, N}), {2, 3, 1, 0}), {Tq * N, B * H});
  ag::Indices pick{std::vector<std::int64_t>(static_cast<std::size_t>(Tq * keys)), {Tq, keys}};
  for (std::int64_t i = 0; i < Tq; ++i)
    for (std::int64_t j = 0; j < keys; ++j) pick.values[i * keys + j] = i * N + (i - j + keys - 1);
  const Tensor picked = ag::embedding(rows, pick);  // [Tq, Tk, B*H]
  return ag::permute(ag::reshape(picked, {Tq, keys, B, H}), {2, 3, 0, 1});
}
// [xl-position-term]

TransformerXLEncoding::TransformerXLEncoding(std::int64_t width, std::int64_t heads,
                                             std::int64_t layers, ag::Rng& rng, ag::Dtype dtype)
    : width_(width), heads_(heads), head_width_(heads > 0 ? width / heads : 0) {
  ag::check(heads >= 1 && width % heads == 0 && width % 2 == 0 && layers >= 1, "xl", "width ",
            width, " must be even and divisible into ", heads, " heads, and layers (got ", layers,
            ") at least 1");
  u = ag::randn({heads, 1, head_width_}, rng, dtype, 0.02);
  v = ag::randn({heads, 1, head_width_}, rng, dtype, 0.02);
  register_parameter("u", u);
  register_parameter("v", v);
  projection.resize(static_cast<std::size_t>(layers));  // sized once: pointers are kept
  for (std::int64_t l = 0; l < layers; ++l) {
    // like a Linear layer's weight: R has entries in [-1, 1], W_R R stays of order 1
    projection[l] = ag::randn({width, width}, rng, dtype, 1.0 / std::sqrt(double(width)));
    register_parameter("w_r." + std::to_string(l), projection[l]);
  }
}

// [xl-hooks]
std::pair<Tensor, Tensor> TransformerXLEncoding::rotate(const Tensor& q, const Tensor& k,
                                                        std::int64_t offset, int layer) const {
  (void)offset, (void)layer;
  ag::check(q.dim() == 4 && q.size(1) == heads_ && q.size(3) == head_width_, "xl",
            "expected q [B, ", heads_, ", T, ", head_width_, "], got ",
            ag::shape_string(q.shape()));
  // (a) + (c) = (q_i + u) . k_j: the keys stay as they are, so cached keys need nothing
  return {ag::add(q, u), k};
}

Tensor TransformerXLEncoding::bias(const Tensor& scores, const Tensor& q, std::int64_t q_offset,
                                   int layer) const {
  ag::check(layer >= 0 && std::size_t(layer) < projection.size(), "xl", "layer ", layer,
            " has no W_R; the encoding was built for ", projection.size(), " layers");
  const std::int64_t Tq = q.size(2), Tk = scores.size(3);
  // R_{i-j} for every distance of the block, smallest first: q_offset - (Tk-1) .. q_offset+Tq-1
  const Tensor R = relative_sinusoid(q_offset - (Tk - 1), Tq + Tk - 1, width_, q.dtype());
  const Tensor projected =
      ag::permute(ag::reshape(ag::matmul(R, projection[layer]), {Tq + Tk - 1, heads_, head_width_}),
                  {1, 0, 2});  // [H, N, D]
  // q arrives as q + u (from rotate); (b) + (d) need q + v
  const Tensor query = ag::add(q, ag::sub(v, u));
  const Tensor term = xl_position_term(query, projected, Tk);
  return ag::add(scores, ag::mul(term, 1.0 / std::sqrt(double(head_width_))));
}
// [xl-hooks]

std::vector<std::pair<std::string, Tensor>> TransformerXLEncoding::inspect(
    std::int64_t length) const {
  return {{"sinusoid", relative_sinusoid(0, length, width_, ag::Dtype::f64)},
          {"u", ag::reshape(u.to(ag::Dtype::f64), {heads_, head_width_})},
          {"v", ag::reshape(v.to(ag::Dtype::f64), {heads_, head_width_})}};
}

}  // namespace pe
