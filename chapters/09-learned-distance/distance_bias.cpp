#include "chapters/09-learned-distance/distance_bias.hpp"

#include <algorithm>

namespace pe {

using ag::Tensor;

namespace {

void check_sizes(const char* what, std::int64_t queries, std::int64_t keys,
                 const Positions& q_positions) {
  ag::check(queries >= 0 && keys >= 0, what, "sizes must not be negative, got Tq ", queries,
            ", Tk ", keys);
  q_positions.check_count(queries, what);
}

}  // namespace

ag::Indices causal_distance_indices(std::int64_t queries, std::int64_t keys,
                                    const Positions& q_positions) {
  check_sizes("causal_distances", queries, keys, q_positions);
  const Positions k_positions = q_positions.keys(keys);
  ag::Indices d{std::vector<std::int64_t>(static_cast<std::size_t>(queries * keys)),
                {queries, keys}};
  for (std::int64_t i = 0; i < queries; ++i)
    for (std::int64_t j = 0; j < keys; ++j)
      d.values[i * keys + j] = std::max<std::int64_t>(q_positions.at(i) - k_positions.at(j), 0);
  return d;
}

Tensor causal_distances(std::int64_t queries, std::int64_t keys, const Positions& q_positions,
                        ag::Dtype dtype) {
  const ag::Indices d = causal_distance_indices(queries, keys, q_positions);
  return ag::from_vector(std::vector<double>(d.values.begin(), d.values.end()), {queries, keys},
                         dtype);
}

Tensor query_positions(std::int64_t queries, const Positions& q_positions, ag::Dtype dtype) {
  check_sizes("query_positions", queries, 0, q_positions);
  std::vector<double> positions(static_cast<std::size_t>(queries));
  for (std::int64_t i = 0; i < queries; ++i) positions[i] = double(q_positions.at(i));
  return ag::from_vector(positions, {queries, 1}, dtype);
}

DistanceBiasPositions::DistanceBiasPositions(std::shared_ptr<DistanceBias> function, bool owns)
    : function_(std::move(function)), owns_(owns) {
  ag::check(function_ != nullptr, "DistanceBiasPositions", "needs a distance function");
  if (owns_) register_module("function", *function_);
}

// [distance-bias-hook]
Tensor DistanceBiasPositions::bias(const Tensor& scores, const Tensor& q, const Tensor& k,
                                   const Positions& q_positions) const {
  (void)q, (void)k;  // a function of positions only, not of the content
  const std::int64_t heads = function_->heads();
  ag::check(scores.dim() == 4 && scores.size(1) == heads, "distance bias", "expected scores [B, ",
            heads, ", Tq, Tk], got ", ag::shape_string(scores.shape()));
  // [H, Tq, Tk] broadcasts over the batch
  return ag::add(scores, function_->bias(scores.size(2), scores.size(3), q_positions));
}
// [distance-bias-hook]

std::shared_ptr<AttentionPositions> DistanceBiasEncoding::make_attention_part(ag::Rng& rng) const {
  if (shared_) return std::make_shared<DistanceBiasPositions>(shared_function_, false);
  return std::make_shared<DistanceBiasPositions>(make_function(rng), true);
}

void DistanceBiasEncoding::make_shared_function(ag::Rng& rng) {
  if (!shared_) return;
  shared_function_ = make_function(rng);
  register_module("function", *shared_function_);
}

}  // namespace pe
