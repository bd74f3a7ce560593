#include "chapters/09-learned-distance/dynamic_position_bias.hpp"

#include <algorithm>
#include <cmath>

namespace pe {

using ag::Tensor;

void check_dynamic_bias_options(const DynamicBiasOptions& options) {
  ag::check(options.width >= 1, "dpb", "width must be at least 1, got ", options.width);
  ag::check(options.depth >= 1, "dpb", "depth must be at least 1, got ", options.depth);
  // width^2 (depth - 1) without overflow: depth and width are checked one at a time first
  const bool fits = options.width <= (std::int64_t(1) << 24) && options.depth <= (1 << 24) &&
                    double(options.width) * double(options.width) * double(options.depth - 1) <=
                        double(kLargestDynamicBiasWeights);
  ag::check(fits, "dpb", "width ", options.width, " and depth ", options.depth,
            " ask for width^2 (depth - 1) hidden weights, more than ", kLargestDynamicBiasWeights);
}

Tensor dynamic_bias_inputs(std::int64_t count, bool log_distance, ag::Dtype dtype) {
  ag::check(count >= 0, "dpb", "the number of distances must not be negative, got ", count);
  std::vector<double> x(static_cast<std::size_t>(count));
  // x-transformers' log distance is sign(d) log(|d| + 1); here d >= 0
  for (std::int64_t d = 0; d < count; ++d) x[d] = log_distance ? std::log1p(double(d)) : double(d);
  return ag::from_vector(x, {count, 1}, dtype);
}

DynamicPositionBias::DynamicPositionBias(std::int64_t heads, const DynamicBiasOptions& options,
                                         ag::Rng& rng, ag::Dtype dtype)
    : f(options.width, options.depth, heads, MlpActivation::silu, rng, dtype),
      log_distance(options.log_distance) {
  register_module("f", f);
}

Tensor DynamicPositionBias::table(std::int64_t count) const {
  return f.forward(dynamic_bias_inputs(count, log_distance, f.layers.front()->weight.dtype()));
}

// [dpb-bias]
Tensor DynamicPositionBias::bias(std::int64_t queries, std::int64_t keys,
                                 const Positions& q_positions) const {
  const ag::Indices d = causal_distance_indices(queries, keys, q_positions);
  // the largest distance in this call is that of the last query to the first key
  const std::int64_t count =
      queries > 0 && keys > 0 ? q_positions.end(queries) - q_positions.keys(keys).at(0) : 1;
  // rows of f's table picked by distance: [Tq, Tk, H], then heads first
  return ag::permute(ag::embedding(table(count), d), {2, 0, 1});
}
// [dpb-bias]

namespace {

DynamicBiasOptions with_width(DynamicBiasOptions options, std::int64_t model_width) {
  if (options.width == 0) options.width = std::max<std::int64_t>(model_width / 4, 1);
  return options;
}

}  // namespace

DynamicBiasEncoding::DynamicBiasEncoding(std::int64_t model_width, std::int64_t heads,
                                         const DynamicBiasOptions& options, ag::Rng& rng,
                                         ag::Dtype dtype)
    : DistanceBiasEncoding(options.shared),
      heads_(heads),
      options_(with_width(options, model_width)),
      dtype_(dtype) {
  ag::check(heads >= 1, "dpb", "needs at least one head, got ", heads);
  check_dynamic_bias_options(options_);
  make_shared_function(rng);
}

std::shared_ptr<DistanceBias> DynamicBiasEncoding::make_function(ag::Rng& rng) const {
  return std::make_shared<DynamicPositionBias>(heads_, options_, rng, dtype_);
}

std::vector<std::pair<std::string, Tensor>> DynamicBiasEncoding::inspect(
    std::int64_t length) const {
  std::vector<std::pair<std::string, Tensor>> out{
      {"input",
       ag::reshape(dynamic_bias_inputs(length, options_.log_distance, ag::Dtype::f64), {length})}};
  if (!shared()) return out;  // each layer's f lives in its part
  ag::NoGradGuard no_grad;
  const auto& function = static_cast<const DynamicPositionBias&>(*shared_function());
  out.push_back({"table", function.table(length).to(ag::Dtype::f64)});
  out.push_back({"bias", function.bias(length, length, 0).to(ag::Dtype::f64)});
  return out;
}

}  // namespace pe
