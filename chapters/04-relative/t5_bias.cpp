#include "chapters/04-relative/t5_bias.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

namespace pe {

using ag::Tensor;

void check_t5_options(const T5BucketOptions& options) {
  ag::check(options.buckets >= 2, "t5", "buckets must be at least 2, got ", options.buckets);
  if (options.bidirectional)
    ag::check(options.buckets % 2 == 0 && options.buckets >= 4, "t5",
              "bidirectional buckets are split in two halves of at least 2, so buckets must be "
              "even and at least 4, got ",
              options.buckets);
  const std::int64_t side = options.bidirectional ? options.buckets / 2 : options.buckets;
  ag::check(options.max_distance > side / 2, "t5", "max_distance ", options.max_distance,
            " must exceed the ", side / 2, " exact buckets (log(max_distance / max_exact) > 0)");
}

// [t5-bucket]
std::int64_t t5_bucket(std::int64_t relative_position, const T5BucketOptions& options) {
  // TASK 4.3 begin: the T5 bucket function
  std::int64_t side = options.buckets, first = 0, n = 0;
  if (options.bidirectional) {
    side /= 2;
    if (relative_position > 0) first = side;  // keys after the query: the upper half
    n = relative_position < 0 ? -relative_position : relative_position;
  } else {
    n = std::max<std::int64_t>(-relative_position, 0);  // future keys count as distance 0
  }
  const std::int64_t max_exact = side / 2;
  if (n < max_exact) return first + n;
  // n >= max_exact >= 1 here, so the logarithm never sees 0
  const double scaled = std::log(double(n) / double(max_exact)) /
                        std::log(double(options.max_distance) / double(max_exact)) *
                        double(side - max_exact);
  const auto large = max_exact + static_cast<std::int64_t>(scaled);  // truncation, as T5
  return first + std::min(large, side - 1);
  // TASK 4.3 end
}
// [t5-bucket]

ag::Indices t5_bucket_matrix(std::int64_t queries, std::int64_t keys, const Positions& q_positions,
                             const T5BucketOptions& options) {
  check_t5_options(options);
  ag::check(queries >= 0 && keys >= 0, "t5", "sizes must not be negative, got Tq ", queries,
            ", Tk ", keys);
  q_positions.check_count(queries, "t5");
  const Positions k_positions = q_positions.keys(keys);
  ag::Indices buckets{std::vector<std::int64_t>(static_cast<std::size_t>(queries * keys)),
                      {queries, keys}};
  for (std::int64_t i = 0; i < queries; ++i)
    for (std::int64_t j = 0; j < keys; ++j)
      buckets.values[i * keys + j] = t5_bucket(k_positions.at(j) - q_positions.at(i), options);
  return buckets;
}

// [t5-bias]
Tensor t5_bias(const Tensor& table, const ag::Indices& buckets) {
  ag::check(table.dim() == 2 && buckets.shape.size() == 2, "t5",
            "expected a table [buckets, H] and a bucket matrix [Tq, Tk], got ",
            ag::shape_string(table.shape()), " and ", ag::shape_string(buckets.shape));
  // rows of the table picked by bucket: [Tq, Tk, H], then heads first
  return ag::permute(ag::embedding(table, buckets), {2, 0, 1});
}
// [t5-bias]

T5Positions::T5Positions(Tensor table_, T5BucketOptions options)
    : table(std::move(table_)), options_(options) {
  check_t5_options(options);
  ag::check(table.dim() == 2 && table.size(0) == options.buckets, "t5", "expected a table [",
            options.buckets, ", H], got ", ag::shape_string(table.shape()));
}

// [t5-hook]
Tensor T5Positions::bias(const Tensor& scores, const Tensor& q, const Tensor& k,
                         const Positions& q_positions) const {
  (void)q, (void)k;  // the bias depends on the distance only, not on the content
  const std::int64_t heads = table.size(1);
  ag::check(scores.dim() == 4 && scores.size(1) == heads, "t5", "expected scores [B, ", heads,
            ", Tq, Tk], got ", ag::shape_string(scores.shape()));
  const ag::Indices buckets =
      t5_bucket_matrix(scores.size(2), scores.size(3), q_positions, options_);
  return ag::add(scores, t5_bias(table, buckets));  // [H, Tq, Tk] broadcasts over B
}
// [t5-hook]

T5Encoding::T5Encoding(std::int64_t heads, T5BucketOptions options, ag::Rng& rng, double stddev,
                       ag::Dtype dtype)
    : options_(options) {
  check_t5_options(options);
  ag::check(heads >= 1, "t5", "heads must be positive, got ", heads);
  table = ag::randn({options.buckets, heads}, rng, dtype, stddev);
  register_parameter("table", table);
}

std::shared_ptr<AttentionPositions> T5Encoding::make_attention_part(ag::Rng& rng) const {
  (void)rng;  // nothing to draw: every layer uses the encoding's table
  return std::make_shared<T5Positions>(table, options_);
}

std::vector<std::pair<std::string, Tensor>> T5Encoding::inspect(std::int64_t length) const {
  const ag::Indices buckets = t5_bucket_matrix(length, length, 0, options_);
  const std::vector<double> values(buckets.values.begin(), buckets.values.end());
  return {{"buckets", ag::from_vector(values, {length, length}, ag::Dtype::f64)},
          {"bias", t5_bias(table.to(ag::Dtype::f64), buckets)}};
}

}  // namespace pe
