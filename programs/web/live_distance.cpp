#include "programs/web/live_distance.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "chapters/06-alibi/alibi.hpp"
#include "chapters/09-learned-distance/learned_distance.hpp"

namespace pe::live {

namespace {

constexpr auto f64 = ag::Dtype::f64;
constexpr double kFireLinearSlope = 4;  // the linear f(u) = -4u: b runs from 0 to -4 as u does to 1

// One query's row of a bias [1, 1, keys] (keys 0 .. q), as b(d) for d = 0 .. count-1: key
// j = q - d.
std::vector<double> by_distance(const ag::Tensor& bias, std::int64_t count) {
  const std::vector<double> row = bias.to_vector();
  const auto q = static_cast<std::int64_t>(row.size()) - 1;
  std::vector<double> out;
  for (std::int64_t d = 0; d < count && d <= q; ++d) out.push_back(row[q - d]);
  return out;
}

nlohmann::json kerple_curve(const nlohmann::json& request, std::int64_t N) {
  ag::Rng rng(1);  // the draws are replaced by r1 and r2 at once
  KerpleBias kernel(1, kerple_form_from(request.at("form").get<std::string>()), rng, f64);
  kernel.set({request.at("r1").get<double>()}, {request.at("r2").get<double>()});
  return by_distance(kernel.bias(1, N, N - 1), N);
}

nlohmann::json fire_curve(const nlohmann::json& request, std::int64_t N) {
  const auto i = request.at("query").get<std::int64_t>();
  ag::check(i >= 0 && i <= 4096, "distance_biases", "FIRE's query ", i, " is outside 0 .. 4096");
  const std::string f = request.at("f").get<std::string>();
  ag::check(f == "linear" || f == "initial", "distance_biases",
            "FIRE's f must be linear or initial, got '", f, "'");
  FireOptions options;
  options.c = request.at("c").get<double>();
  options.threshold = request.at("threshold").get<double>();
  if (f == "linear") options.width = 1;
  ag::Rng rng(request.at("seed").get<std::uint64_t>());
  FireBias fire(1, options, rng, f64);  // checks c and L
  if (f == "linear") {                  // u >= 0 passes the ReLU unchanged
    fire.f.layers[0]->weight.copy_from(ag::full({1, 1}, 1.0, f64));
    fire.f.layers[0]->bias.copy_from(ag::zeros({1}, f64));
    fire.f.layers[1]->weight.copy_from(ag::full({1, 1}, -kFireLinearSlope, f64));
    fire.f.layers[1]->bias.copy_from(ag::zeros({1}, f64));
  }
  const std::vector<double> input = by_distance(fire.normalized_distance(1, i + 1, i), N);
  std::vector<std::int64_t> distance(input.size());
  for (std::size_t d = 0; d < distance.size(); ++d) distance[d] = std::int64_t(d);
  return {
      {"distance", distance}, {"input", input}, {"bias", by_distance(fire.bias(1, i + 1, i), N)}};
}

nlohmann::json dpb_curve(const nlohmann::json& request, std::int64_t N) {
  DynamicBiasOptions options;
  options.width = 64 / 4;  // x-transformers' C / 4 for a model of width 64
  options.log_distance = request.at("log_distance").get<bool>();
  ag::Rng rng(request.at("seed").get<std::uint64_t>());
  DynamicPositionBias dpb(1, options, rng, f64);
  return by_distance(dpb.bias(1, N, N - 1), N);
}

}  // namespace

nlohmann::json distance_biases(const nlohmann::json& request) {
  const auto N = request.at("distances").get<std::int64_t>();
  ag::check(N >= 1 && N <= 1024, "distance_biases", "distances ", N, " is outside 1 .. 1024");
  const nlohmann::json& alibi = request.at("alibi");
  const auto H = alibi.at("heads").get<std::int64_t>(), h = alibi.at("head").get<std::int64_t>();
  ag::check(H >= 1 && H <= 64 && h >= 1 && h <= H, "distance_biases", "ALiBi's head ", h, " of ", H,
            " heads is outside 1 .. H (H from 1 to 64)");
  ag::NoGradGuard no_grad;
  // ALiBi's H heads, of which head h (counted from 1, as chapter 6 counts them)
  const ag::Tensor alibi_row = ag::slice(alibi_bias(H, 1, N, N - 1, f64), 0, h - 1, h);
  std::vector<std::int64_t> distance(static_cast<std::size_t>(N));
  for (std::int64_t d = 0; d < N; ++d) distance[d] = d;
  return {{"distance", distance},
          {"kerple", kerple_curve(request.at("kerple"), N)},
          {"fire", fire_curve(request.at("fire"), N)},
          {"dpb", dpb_curve(request.at("dpb"), N)},
          {"alibi", by_distance(alibi_row, N)},
          {"alibi_slope", alibi_slopes(H)[h - 1]}};
}

}  // namespace pe::live
