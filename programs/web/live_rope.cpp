#include "programs/web/live_rope.hpp"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "chapters/01-attention/encoding_registry.hpp"

namespace pe::live {

nlohmann::json rope_scores(const nlohmann::json& request) {
  const auto D = request.at("dim").get<std::int64_t>();
  const auto L = request.at("length").get<std::int64_t>();
  const auto starts = request.at("starts").get<std::vector<std::int64_t>>();
  ag::check(D >= 2 && D <= 1024 && D % 2 == 0, "rope_scores",
            "dim must be even, from 2 to 1024, got ", D);
  ag::check(L >= 1 && L <= 4096, "rope_scores", "length ", L, " is outside 1 .. 4096");
  ag::check(!starts.empty(), "rope_scores", "needs at least one start");
  for (std::int64_t m : starts)
    ag::check(m >= 0 && m <= 4096, "rope_scores", "start ", m, " is outside 0 .. 4096");
  const std::int64_t positions = *std::max_element(starts.begin(), starts.end()) + L;

  EncodingSpec spec;  // one head of width D
  spec.model.width = D;
  spec.model.heads = 1;
  spec.max_length = positions;
  spec.options = request.value("options", std::map<std::string, std::string>{});
  spec.dtype = ag::Dtype::f64;
  ag::Rng rng(request.value("seed", std::uint64_t(1)));
  const auto encoding = make_encoding("rope", spec, rng);
  const auto part = encoding->make_attention_part(rng);

  // The same q (and the same k) at every position 0 .. positions-1, turned in one call.
  const ag::Tensor q1 = ag::randn({1, 1, 1, D}, rng, ag::Dtype::f64);
  const ag::Tensor k1 = ag::randn({1, 1, 1, D}, rng, ag::Dtype::f64);
  const ag::Tensor ones = ag::ones({1, 1, positions, 1}, ag::Dtype::f64);
  const auto [q, k] = part->rotate(ag::mul(ones, q1), ag::mul(ones, k1), 0);
  const std::vector<double> qv = q.to_vector(), kv = k.to_vector();

  std::vector<std::vector<double>> scores;
  for (std::int64_t m : starts) {
    std::vector<double> row;
    for (std::int64_t r = 0; r < L; ++r) {  // the query r positions after the key
      double dot = 0;
      for (std::int64_t c = 0; c < D; ++c) dot += qv[(m + r) * D + c] * kv[m * D + c];
      row.push_back(dot / std::sqrt(double(D)));
    }
    scores.push_back(row);
  }
  std::vector<std::int64_t> offsets(L);
  for (std::int64_t r = 0; r < L; ++r) offsets[r] = r;
  return {{"offsets", offsets}, {"scores", scores}};
}

}  // namespace pe::live
