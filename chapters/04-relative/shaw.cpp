#include "chapters/04-relative/shaw.hpp"

#include <algorithm>
#include <cmath>

namespace pe {

using ag::Tensor;

// [shaw-index]
ag::Indices shaw_clipped_index(std::int64_t queries, std::int64_t keys,
                               const Positions& q_positions, std::int64_t k) {
  ag::check(k >= 1, "shaw", "max_distance k must be at least 1, got ", k);
  ag::check(queries >= 0 && keys >= 0, "shaw", "sizes must not be negative, got Tq ", queries,
            ", Tk ", keys);
  q_positions.check_count(queries, "shaw");
  const Positions k_positions = q_positions.keys(keys);
  // TASK 4.1 begin: Shaw's clipped index matrix
  ag::Indices index{std::vector<std::int64_t>(static_cast<std::size_t>(queries * keys)),
                    {queries, keys}};
  for (std::int64_t i = 0; i < queries; ++i)
    for (std::int64_t j = 0; j < keys; ++j)
      // distances beyond k share the outermost vector: clip(j - i, -k, k), shifted to 0 .. 2k
      index.values[i * keys + j] = std::clamp(k_positions.at(j) - q_positions.at(i), -k, k) + k;
  return index;
  // TASK 4.1 end
}
// [shaw-index]

namespace {

void check_key_term_arguments(const Tensor& q, const Tensor& table, const ag::Indices& index) {
  ag::check(q.dim() == 4 && table.dim() == 2 && q.size(3) == table.size(1), "shaw",
            "expected q [B, H, Tq, D] and a table [2k+1, D], got ", ag::shape_string(q.shape()),
            " and ", ag::shape_string(table.shape()));
  ag::check(index.shape.size() == 2 && index.shape[0] == q.size(2), "shaw", "index ",
            ag::shape_string(index.shape), " does not have the ", q.size(2),
            " rows of the queries");
}

void check_value_term_arguments(const Tensor& weights, const Tensor& table,
                                const ag::Indices& index) {
  ag::check(weights.dim() == 4 && table.dim() == 2, "shaw",
            "expected weights [B, H, Tq, Tk] and a table [2k+1, D], got ",
            ag::shape_string(weights.shape()), " and ", ag::shape_string(table.shape()));
  ag::check(index.shape == ag::Shape{weights.size(2), weights.size(3)}, "shaw", "index ",
            ag::shape_string(index.shape), " does not match the weights' [Tq, Tk] = [",
            weights.size(2), ", ", weights.size(3), "]");
}

}  // namespace

// [shaw-terms]
Tensor shaw_key_term(const Tensor& q, const Tensor& table, const ag::Indices& index) {
  check_key_term_arguments(q, table, index);
  // TASK 4.2 begin: Shaw's key term
  // q_i . a^K_r for each of the 2k+1 rows r: one product [B, H, Tq, 2k+1], no pair yet
  const Tensor per_row = ag::matmul_transposed(q, table);
  // then the pair (i, j) reads the column of its clipped distance: [B, H, Tq, Tk]
  return ag::gather_columns(per_row, index);
  // TASK 4.2 end
}

Tensor shaw_value_term(const Tensor& weights, const Tensor& table, const ag::Indices& index) {
  check_value_term_arguments(weights, table, index);
  // the weights of the pairs that share a row are added first: [B, H, Tq, 2k+1]
  const Tensor per_row = ag::scatter_add_columns(weights, index, table.size(0));
  return ag::matmul(per_row, table);  // then one product with the 2k+1 rows: [B, H, Tq, D]
}
// [shaw-terms]

// [shaw-pairwise]
Tensor shaw_key_term_pairwise(const Tensor& q, const Tensor& table, const ag::Indices& index) {
  check_key_term_arguments(q, table, index);
  const std::int64_t B = q.size(0), H = q.size(1), Tq = q.size(2), D = q.size(3),
                     Tk = index.shape[1];
  const Tensor a = ag::embedding(table, index);  // [Tq, Tk, D]: a_ij for every pair
  // one batched product per query position i: (B*H rows of q_i) @ (a_i0 .. a_i,Tk-1)^T
  const Tensor q_by_position = ag::reshape(ag::permute(q, {2, 0, 1, 3}), {Tq, B * H, D});
  const Tensor term = ag::matmul_transposed(q_by_position, a);  // [Tq, B*H, Tk]
  return ag::permute(ag::reshape(term, {Tq, B, H, Tk}), {1, 2, 0, 3});
}

Tensor shaw_value_term_pairwise(const Tensor& weights, const Tensor& table,
                                const ag::Indices& index) {
  check_value_term_arguments(weights, table, index);
  const std::int64_t B = weights.size(0), H = weights.size(1), Tq = weights.size(2),
                     Tk = weights.size(3), D = table.size(1);
  const Tensor a = ag::embedding(table, index);  // [Tq, Tk, D]
  const Tensor w_by_position = ag::reshape(ag::permute(weights, {2, 0, 1, 3}), {Tq, B * H, Tk});
  const Tensor term = ag::matmul(w_by_position, a);  // [Tq, B*H, D]
  return ag::permute(ag::reshape(term, {Tq, B, H, D}), {1, 2, 0, 3});
}
// [shaw-pairwise]

ShawPositions::ShawPositions(std::int64_t max_distance, std::int64_t head_width, ag::Rng& rng,
                             double stddev, ag::Dtype dtype, bool pairwise)
    : max_distance_(max_distance), head_width_(head_width), pairwise_(pairwise) {
  ag::check(max_distance >= 1, "shaw", "max_distance k must be at least 1, got ", max_distance);
  ag::check(head_width >= 1, "shaw", "head width must be positive, got ", head_width);
  key_table = ag::randn({2 * max_distance + 1, head_width}, rng, dtype, stddev);
  value_table = ag::randn({2 * max_distance + 1, head_width}, rng, dtype, stddev);
  register_parameter("key_table", key_table);
  register_parameter("value_table", value_table);
}

// [shaw-hooks]
Tensor ShawPositions::bias(const Tensor& scores, const Tensor& q, const Tensor& k,
                           const Positions& q_positions) const {
  const ag::Indices index = shaw_clipped_index(q.size(2), k.size(2), q_positions, max_distance_);
  // the same 1/sqrt(D) as q_i . k_j, so that a^K acts like a correction to the key
  const Tensor term =
      pairwise_ ? shaw_key_term_pairwise(q, key_table, index) : shaw_key_term(q, key_table, index);
  return ag::add(scores, ag::mul(term, 1.0 / std::sqrt(double(head_width_))));
}

Tensor ShawPositions::values(const Tensor& out, const Tensor& weights,
                             const Positions& q_positions) const {
  const ag::Indices index =
      shaw_clipped_index(weights.size(2), weights.size(3), q_positions, max_distance_);
  return ag::add(out, pairwise_ ? shaw_value_term_pairwise(weights, value_table, index)
                                : shaw_value_term(weights, value_table, index));
}
// [shaw-hooks]

ShawEncoding::ShawEncoding(std::int64_t max_distance, std::int64_t head_width, double stddev,
                           ag::Dtype dtype, bool pairwise)
    : max_distance_(max_distance),
      head_width_(head_width),
      stddev_(stddev),
      dtype_(dtype),
      pairwise_(pairwise) {
  ag::check(max_distance >= 1, "shaw", "max_distance k must be at least 1, got ", max_distance);
  ag::check(head_width >= 1, "shaw", "head width must be positive, got ", head_width);
}

std::shared_ptr<AttentionPositions> ShawEncoding::make_attention_part(ag::Rng& rng) const {
  return std::make_shared<ShawPositions>(max_distance_, head_width_, rng, stddev_, dtype_,
                                         pairwise_);
}

std::vector<std::pair<std::string, Tensor>> ShawEncoding::inspect(std::int64_t length) const {
  const ag::Indices index = shaw_clipped_index(length, length, 0, max_distance_);
  std::vector<double> values(index.values.begin(), index.values.end());
  return {{"index", ag::from_vector(values, {length, length}, ag::Dtype::f64)}};
}

}  // namespace pe
