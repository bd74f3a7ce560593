#include "chapters/04-relative/transformer_xl.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <utility>

#include "chapters/02-sinusoidal/sinusoidal.hpp"

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
  // TASK 4.4 begin: Transformer-XL's relative shift
  ag::Indices pick{std::vector<std::int64_t>(static_cast<std::size_t>(Tq * keys)), {Tq, keys}};
  for (std::int64_t i = 0; i < Tq; ++i)
    for (std::int64_t j = 0; j < keys; ++j) pick.values[i * keys + j] = i * N + (i - j + keys - 1);
  const Tensor picked = ag::embedding(rows, pick);  // [Tq, Tk, B*H]
  return ag::permute(ag::reshape(picked, {Tq, keys, B, H}), {2, 3, 0, 1});
  // TASK 4.4 end
}
// [xl-position-term]

Tensor xl_pairwise_position_term(const Tensor& query, const Tensor& projection,
                                 const Positions& q_positions, std::int64_t keys) {
  const std::int64_t B = query.size(0), H = query.size(1), Tq = query.size(2), D = query.size(3);
  ag::check(query.dim() == 4 && projection.dim() == 2 && projection.size(0) == H * D &&
                projection.size(1) == H * D && Tq > 0 && keys > 0,
            "xl", "expected query [B, H, Tq, D], a projection [H*D, H*D] and keys, got ",
            ag::shape_string(query.shape()), ", ", ag::shape_string(projection.shape()), " and ",
            keys);
  q_positions.check_count(Tq, "xl");
  const Positions k_positions = q_positions.keys(keys);
  // the distances p_i - p_j, as rows of a relative sinusoid from the smallest one
  const std::int64_t first = q_positions.at(0) - k_positions.at(keys - 1);
  const std::int64_t last = q_positions.at(Tq - 1) - k_positions.at(0);
  ag::Indices pick{std::vector<std::int64_t>(static_cast<std::size_t>(Tq * keys)), {Tq, keys}};
  for (std::int64_t i = 0; i < Tq; ++i)
    for (std::int64_t j = 0; j < keys; ++j)
      pick.values[i * keys + j] = q_positions.at(i) - k_positions.at(j) - first;
  const Tensor R = relative_sinusoid(first, last - first + 1, H * D, query.dtype());
  // W_R R_{p_i - p_j} for every pair: [Tq, Tk, H, D], then heads beside the queries
  const Tensor pairs =
      ag::reshape(ag::matmul(ag::embedding(R, pick), projection), {Tq, keys, H, D});
  const Tensor by_query = ag::reshape(ag::permute(pairs, {0, 2, 1, 3}), {Tq * H, keys, D});
  // one product per (query, head): (q_i + v) against its Tk vectors
  const Tensor q_rows = ag::reshape(ag::permute(query, {2, 1, 0, 3}), {Tq * H, B, D});
  const Tensor term = ag::matmul_transposed(q_rows, by_query);  // [Tq*H, B, Tk]
  return ag::permute(ag::reshape(term, {Tq, H, B, keys}), {2, 1, 0, 3});
}

TransformerXLPositions::TransformerXLPositions(Tensor u_, Tensor v_, std::int64_t width,
                                               ag::Rng& rng)
    : u(std::move(u_)), v(std::move(v_)), width_(width) {
  ag::check(
      u.dim() == 3 && v.shape() == u.shape() && u.size(1) == 1 && u.size(0) * u.size(2) == width,
      "xl", "expected u and v [H, 1, D] with H * D = width ", width, ", got ",
      ag::shape_string(u.shape()), " and ", ag::shape_string(v.shape()));
  heads_ = u.size(0);
  head_width_ = u.size(2);
  // like a Linear layer's weight: R has entries in [-1, 1], W_R R stays of order 1
  projection = ag::randn({width, width}, rng, u.dtype(), 1.0 / std::sqrt(double(width)));
  register_parameter("w_r", projection);
}

// [xl-hooks]
Tensor TransformerXLPositions::bias(const Tensor& scores, const Tensor& q, const Tensor& k,
                                    const Positions& q_positions) const {
  ag::check(q.dim() == 4 && q.size(1) == heads_ && q.size(3) == head_width_ && k.dim() == 4 &&
                k.size(1) == heads_ && k.size(3) == head_width_,
            "xl", "expected q and k [B, ", heads_, ", T, ", head_width_, "], got ",
            ag::shape_string(q.shape()), " and ", ag::shape_string(k.shape()));
  const std::int64_t B = k.size(0), Tq = q.size(2), Tk = k.size(2);
  // (c) = u . k_j: how much any query likes the content of key j, the same for every query
  const Tensor content = ag::reshape(ag::sum(ag::mul(k, u), {3}), {B, heads_, 1, Tk});
  Tensor position;  // (b) + (d) = (q_i + v) . W_R R_{i-j}
  if (q_positions.is_contiguous() && !q_positions.has_explicit_keys()) {
    // R_{i-j} for every distance of the block, smallest first: offset - (Tk-1) .. offset+Tq-1
    const std::int64_t q_offset = q_positions.first();
    const Tensor R = relative_sinusoid(q_offset - (Tk - 1), Tq + Tk - 1, width_, q.dtype());
    const Tensor projected =
        ag::permute(ag::reshape(ag::matmul(R, projection), {Tq + Tk - 1, heads_, head_width_}),
                    {1, 0, 2});  // [H, N, D]
    position = xl_position_term(ag::add(q, v), projected, Tk);
  } else {  // sampled ids, or the keys a trimmed cache kept (chapter 12)
    position = xl_pairwise_position_term(ag::add(q, v), projection, q_positions, Tk);
  }
  // (a) arrived as the scores, already divided by sqrt(D); the other three terms follow suit
  const Tensor terms = ag::add(position, content);  // [B, H, Tq, Tk]
  return ag::add(scores, ag::mul(terms, 1.0 / std::sqrt(double(head_width_))));
}
// [xl-hooks]

TransformerXLEncoding::TransformerXLEncoding(std::int64_t width, std::int64_t heads, ag::Rng& rng,
                                             ag::Dtype dtype)
    : width_(width), heads_(heads), head_width_(heads > 0 ? width / heads : 0) {
  ag::check(heads >= 1 && width % heads == 0 && width % 2 == 0, "xl", "width ", width,
            " must be even and divisible into ", heads, " heads");
  u = ag::randn({heads, 1, head_width_}, rng, dtype, 0.02);
  v = ag::randn({heads, 1, head_width_}, rng, dtype, 0.02);
  register_parameter("u", u);
  register_parameter("v", v);
}

std::shared_ptr<AttentionPositions> TransformerXLEncoding::make_attention_part(ag::Rng& rng) const {
  return std::make_shared<TransformerXLPositions>(u, v, width_, rng);
}

std::vector<std::pair<std::string, Tensor>> TransformerXLEncoding::inspect(
    std::int64_t length) const {
  return {{"sinusoid", relative_sinusoid(0, length, width_, ag::Dtype::f64)},
          {"u", ag::reshape(u.to(ag::Dtype::f64), {heads_, head_width_})},
          {"v", ag::reshape(v.to(ag::Dtype::f64), {heads_, head_width_})}};
}

}  // namespace pe
