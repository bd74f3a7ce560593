#include "chapters/09-learned-distance/decay_curves.hpp"

namespace pe {

std::vector<std::vector<double>> bias_against_distance(const Decoder& model, std::int64_t layer,
                                                       std::int64_t length) {
  ag::check(layer >= 0 && layer < std::int64_t(model.blocks.size()), "bias_against_distance",
            "layer ", layer, " of a model with ", model.blocks.size(), " layers");
  ag::check(length >= 1, "bias_against_distance", "length must be positive, got ", length);
  const SelfAttention& attention = model.blocks[std::size_t(layer)]->attention;
  const std::int64_t H = attention.heads, D = attention.head_width;
  const ag::Dtype dtype = model.tokens.weight.dtype();
  ag::NoGradGuard no_grad;
  // Only the last query: one row of scores [1, H, 1, T] at offset length-1.
  const ag::Tensor scores = ag::zeros({1, H, 1, length}, dtype);
  const ag::Tensor q = ag::zeros({1, H, 1, D}, dtype), k = ag::zeros({1, H, length, D}, dtype);
  const std::vector<double> row = attention.positions->bias(scores, q, k, length - 1).to_vector();
  std::vector<std::vector<double>> curves(static_cast<std::size_t>(H),
                                          std::vector<double>(static_cast<std::size_t>(length)));
  for (std::int64_t h = 0; h < H; ++h)
    for (std::int64_t d = 0; d < length; ++d)
      curves[std::size_t(h)][std::size_t(d)] = row[std::size_t(h * length + (length - 1 - d))];
  return curves;
}

}  // namespace pe
