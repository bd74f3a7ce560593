#include "chapters/09-learned-distance/fire.hpp"

#include <cmath>

namespace pe {

using ag::Tensor;

FireTransform fire_transform_from(const std::string& name) {
  if (name == "log") return FireTransform::log;
  if (name == "none") return FireTransform::none;
  throw ag::Error("fire: option transform must be log or none, got '" + name + "'");
}

std::string fire_transform_name(FireTransform transform) {
  return transform == FireTransform::log ? "log" : "none";
}

void check_fire_options(const FireOptions& options) {
  ag::check(options.width >= 1, "fire", "width must be at least 1, got ", options.width);
  ag::check(std::isfinite(options.c) && options.c > 0, "fire",
            "c must be positive (psi(x) = log(c x + 1)), got ", options.c);
  ag::check(std::isfinite(options.threshold) && options.threshold > 0, "fire",
            "threshold (L) must be positive, got ", options.threshold);
}

// [fire-normalized-distance]
Tensor fire_normalized_distance(const Tensor& c, const Tensor& L, FireTransform transform,
                                std::int64_t queries, std::int64_t keys,
                                const Positions& q_positions, double eps) {
  ag::check(c.numel() == 1 && L.numel() == 1, "fire", "c and L are single numbers, got ",
            ag::shape_string(c.shape()), " and ", ag::shape_string(L.shape()));
  const Tensor d = causal_distances(queries, keys, q_positions, c.dtype());  // [Tq, Tk]
  const Tensor n = query_positions(queries, q_positions, c.dtype());         // [Tq, 1]
  // max(n, L) = n + relu(L - n): the threshold keeps short prefixes on L's scale
  // TASK 9.2 begin: FIRE's progressive normalisation
  const Tensor normalizer = ag::add(n, ag::relu(ag::sub(L, n)));
  if (transform == FireTransform::none) return ag::div(d, ag::add(normalizer, eps));
  // psi(x) = log(|c x| + 1) = log1p(|c| x) for x >= 0
  const Tensor c_abs = ag::abs(c);
  return ag::div(ag::log1p(ag::mul(d, c_abs)), ag::add(ag::log1p(ag::mul(normalizer, c_abs)), eps));
  // TASK 9.2 end
}
// [fire-normalized-distance]

FireBias::FireBias(std::int64_t heads, const FireOptions& options, ag::Rng& rng, ag::Dtype dtype)
    : f(options.width, 1, heads, MlpActivation::relu, rng, dtype),
      c(ag::full({1}, options.c, dtype)),
      L_multiplier(ag::full({1}, 1.0, dtype)),
      L_init(options.threshold),
      transform(options.transform) {
  check_fire_options(options);
  register_module("f", f);
  register_parameter("c", c);
  register_parameter("L_multiplier", L_multiplier);
}

Tensor FireBias::threshold() const { return ag::abs(ag::mul(L_multiplier, L_init)); }

Tensor FireBias::normalized_distance(std::int64_t queries, std::int64_t keys,
                                     const Positions& q_positions) const {
  return fire_normalized_distance(c, threshold(), transform, queries, keys, q_positions);
}

// [fire-bias]
Tensor FireBias::bias(std::int64_t queries, std::int64_t keys, const Positions& q_positions) const {
  const Tensor u = normalized_distance(queries, keys, q_positions);  // [Tq, Tk]
  // f at every (query, key): the input depends on the query's position too, not on d alone
  const Tensor b = f.forward(ag::reshape(u, {queries * keys, 1}));  // [Tq * Tk, H]
  return ag::permute(ag::reshape(b, {queries, keys, heads()}), {2, 0, 1});
}
// [fire-bias]

FireEncoding::FireEncoding(std::int64_t heads, const FireOptions& options, ag::Rng& rng,
                           ag::Dtype dtype)
    : DistanceBiasEncoding(options.shared), heads_(heads), options_(options), dtype_(dtype) {
  ag::check(heads >= 1, "fire", "needs at least one head, got ", heads);
  check_fire_options(options);
  make_shared_function(rng);
}

std::shared_ptr<DistanceBias> FireEncoding::make_function(ag::Rng& rng) const {
  return std::make_shared<FireBias>(heads_, options_, rng, dtype_);
}

std::vector<std::pair<std::string, Tensor>> FireEncoding::inspect(std::int64_t length) const {
  ag::NoGradGuard no_grad;
  const Tensor c = ag::full({1}, options_.c, ag::Dtype::f64);
  const Tensor L = ag::full({1}, options_.threshold, ag::Dtype::f64);
  std::vector<std::pair<std::string, Tensor>> out{
      {"normalized_distance",
       fire_normalized_distance(c, L, options_.transform, length, length, 0)}};
  if (shared())
    out.push_back({"bias", shared_function()->bias(length, length, 0).to(ag::Dtype::f64)});
  return out;
}

}  // namespace pe
