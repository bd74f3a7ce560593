#include "programs/web/live_permutation.hpp"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "chapters/01-attention/decoder.hpp"
#include "chapters/01-attention/permutation.hpp"

namespace pe::live {

namespace {

std::vector<std::vector<double>> rows_of(const ag::Tensor& h) {  // [1, T, C] -> T rows
  const std::vector<double> v = h.to_vector();
  const std::int64_t T = h.size(1), C = h.size(2);
  std::vector<std::vector<double>> rows;
  for (std::int64_t t = 0; t < T; ++t)
    rows.emplace_back(v.begin() + t * C, v.begin() + (t + 1) * C);
  return rows;
}

}  // namespace

nlohmann::json permutation_outputs(const nlohmann::json& request) {
  const auto words = request.at("words").get<std::vector<std::int64_t>>();
  const auto order = request.at("order").get<std::vector<std::int64_t>>();
  const auto T = std::int64_t(words.size());
  DecoderConfig config;  // chapter 1's reference model: width 256, 1 head, feed-forward 1024
  config.vocab = request.at("vocab").get<std::int64_t>();
  config.causal = request.at("causal").get<bool>();
  ag::check(T >= 1 && T <= 64, "permutation", "needs 1 to 64 words, got ", T);
  ag::check(config.vocab >= 1 && config.vocab <= 1000, "permutation", "vocab ", config.vocab,
            " is outside 1 .. 1000");
  for (std::int64_t w : words)
    ag::check(w >= 0 && w < config.vocab, "permutation", "word id ", w, " is outside 0 .. ",
              config.vocab - 1);
  std::vector<std::int64_t> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  for (std::int64_t i = 0; i < T; ++i)
    ag::check(std::int64_t(sorted.size()) == T && sorted[i] == i, "permutation",
              "order must hold each of 0 .. ", T - 1, " once");

  ag::Rng rng(request.value("seed", std::uint64_t(1)));
  Decoder model(config, std::make_shared<NoEncoding>(), rng);
  ag::NoGradGuard no_grad;
  std::vector<std::int64_t> shuffled(T);
  for (std::int64_t i = 0; i < T; ++i) shuffled[i] = words[order[i]];
  const ag::Tensor original = model.hidden_states({words, {1, T}}).back();
  const ag::Tensor permuted = model.hidden_states({shuffled, {1, T}}).back();
  const ag::Tensor reordered = reorder_positions(original, order);
  double scale = 0;
  for (double v : original.to_vector()) scale = std::max(scale, std::abs(v));
  return {{"shuffled", shuffled},
          {"original", rows_of(original)},
          {"permuted", rows_of(permuted)},
          {"reordered", rows_of(reordered)},
          {"max_difference", max_abs_difference(permuted, reordered)},
          {"scale", scale}};
}

}  // namespace pe::live
