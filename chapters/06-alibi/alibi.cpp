#include "chapters/06-alibi/alibi.hpp"

#include <cmath>

#include "chapters/01-attention/encoding_registry.hpp"

namespace pe {

using ag::Tensor;

// [alibi-slopes]
std::vector<double> alibi_slopes(std::int64_t heads) {
  ag::check(heads >= 1, "alibi_slopes", "needs at least one head, got ", heads);
  // TASK 6.1 begin: the ALiBi slopes
  // H = 2^k heads: start = ratio = 2^(-8/H), slope_h = 2^(-8(h+1)/H) for h = 0 .. H-1.
  const auto power_of_two_slopes = [](std::int64_t count) {
    std::vector<double> slopes;
    for (std::int64_t h = 0; h < count; ++h)
      slopes.push_back(std::exp2(-8.0 * double(h + 1) / double(count)));
    return slopes;
  };
  std::int64_t below = 1;  // the largest power of two <= heads
  while (below * 2 <= heads) below *= 2;
  std::vector<double> slopes = power_of_two_slopes(below);
  if (below == heads) return slopes;
  // The rest: every other slope of the next power of two, which fall between ours.
  const std::vector<double> finer = power_of_two_slopes(2 * below);
  for (std::int64_t i = 0; i < heads - below; ++i) slopes.push_back(finer[2 * i]);
  return slopes;
  // TASK 6.1 end
}
// [alibi-slopes]

// [alibi-bias]
Tensor alibi_bias(std::int64_t heads, std::int64_t queries, std::int64_t keys,
                  const Positions& q_positions, ag::Dtype dtype) {
  ag::check(queries >= 0 && keys >= 0, "alibi_bias", "sizes must not be negative, got Tq ", queries,
            ", Tk ", keys);
  q_positions.check_count(queries, "alibi_bias");
  const Positions k_positions = q_positions.keys(keys);
  // TASK 6.2 begin: the ALiBi bias matrix
  const std::vector<double> slopes = alibi_slopes(heads);
  std::vector<double> bias(static_cast<std::size_t>(heads * queries * keys));
  for (std::int64_t h = 0; h < heads; ++h)
    for (std::int64_t i = 0; i < queries; ++i)
      for (std::int64_t j = 0; j < keys; ++j)
        // -slope (i - j), written as slope (j - i) so that the diagonal is +0, not -0
        bias[(h * queries + i) * keys + j] =
            slopes[h] * double(k_positions.at(j) - q_positions.at(i));
  return ag::from_vector(bias, {heads, queries, keys}, dtype);
  // TASK 6.2 end
}
// [alibi-bias]

AlibiPositions::AlibiPositions(std::int64_t heads) : heads_(heads) {
  ag::check(heads >= 1, "alibi", "needs at least one head, got ", heads);
}

// [alibi-hook]
Tensor AlibiPositions::bias(const Tensor& scores, const Tensor& q, const Tensor& k,
                            const Positions& q_positions) const {
  (void)q, (void)k;  // the bias depends on positions only, the same in every layer
  ag::check(scores.dim() == 4 && scores.size(1) == heads_, "alibi", "expected scores [B, ", heads_,
            ", Tq, Tk], got ", ag::shape_string(scores.shape()));
  // [H, Tq, Tk] broadcasts over the batch
  return ag::add(scores,
                 alibi_bias(heads_, scores.size(2), scores.size(3), q_positions, scores.dtype()));
}
// [alibi-hook]

AlibiEncoding::AlibiEncoding(std::int64_t heads) : heads_(heads), slopes_(alibi_slopes(heads)) {}

std::shared_ptr<AttentionPositions> AlibiEncoding::make_attention_part(ag::Rng& rng) const {
  (void)rng;  // no parameters to draw
  return std::make_shared<AlibiPositions>(heads_);
}

std::vector<std::pair<std::string, Tensor>> AlibiEncoding::inspect(std::int64_t length) const {
  return {{"slopes", ag::from_vector(slopes_, {heads_}, ag::Dtype::f64)},
          {"bias", alibi_bias(heads_, length, length, 0, ag::Dtype::f64)}};
}

void register_ch06_encodings() {
  register_encoding({"alibi",
                     "06",
                     "linear biases: each head subtracts slope_h * (i - j) from the scores",
                     {},
                     [](const EncodingSpec& spec, ag::Rng&) {
                       return std::make_shared<AlibiEncoding>(spec.model.heads);
                     }});
}

}  // namespace pe
