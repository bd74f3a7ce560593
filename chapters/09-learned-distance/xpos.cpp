#include "chapters/09-learned-distance/xpos.hpp"

#include <cmath>

namespace pe {

using ag::Tensor;

void check_xpos_options(const XposOptions& options) {
  ag::check(std::isfinite(options.base) && options.base > 1, "xpos",
            "base must be greater than 1, got ", options.base);
  ag::check(std::isfinite(options.gamma) && options.gamma > 0, "xpos",
            "gamma must be positive (zeta_0 = gamma / (1 + gamma)), got ", options.gamma);
  ag::check(std::isfinite(options.scale_base) && options.scale_base > 0, "xpos",
            "scale_base must be positive, got ", options.scale_base);
}

// [xpos-scale]
std::vector<double> xpos_zeta(std::int64_t dim, double gamma) {
  ag::check(dim > 0 && dim % 2 == 0, "xpos", "the head width must be even and positive, got ", dim);
  // TASK 9.3 begin: xPos's decay rates zeta_i
  std::vector<double> zeta(static_cast<std::size_t>(dim / 2));
  // torchscale: (arange(0, d, 2) + gamma d) / ((1 + gamma) d), the same numbers
  for (std::int64_t i = 0; i < dim / 2; ++i)
    zeta[i] = (2.0 * double(i) / double(dim) + gamma) / (1 + gamma);
  return zeta;
  // TASK 9.3 end
}

Tensor xpos_scale(std::int64_t count, const Positions& positions, std::int64_t dim,
                  const XposOptions& options, double sign, ag::Dtype dtype) {
  positions.check_count(count, "xpos");
  const std::vector<double> zeta = xpos_zeta(dim, options.gamma);
  std::vector<double> scale(static_cast<std::size_t>(count * dim));
  for (std::int64_t t = 0; t < count; ++t)
    for (std::int64_t i = 0; i < dim / 2; ++i) {
      // zeta_i^(+-m/B). torchscale centres m on the sequence for the scale (not for the turn);
      // the centre cancels in q . k but would change a cached key's scale as the sequence
      // grows, so here m is the position itself
      const double s = std::pow(zeta[i], sign * double(positions.at(t)) / options.scale_base);
      scale[t * dim + 2 * i] = scale[t * dim + 2 * i + 1] = s;  // both coordinates of plane i
    }
  return ag::from_vector(scale, {count, dim}, dtype);
}
// [xpos-scale]

namespace {

RotaryOptions rotary_options(const XposOptions& options) {
  RotaryOptions rotary;
  rotary.base = options.base;
  rotary.layout = RotaryLayout::adjacent;  // torchscale's rotate_every_two
  return rotary;
}

}  // namespace

XposPositions::XposPositions(std::int64_t head_width, const XposOptions& options)
    : head_width_(head_width),
      options_((check_xpos_options(options), options)),
      rotary_(head_width, rotary_options(options)) {}

// [xpos-rotate]
std::pair<Tensor, Tensor> XposPositions::rotate(const Tensor& q, const Tensor& k,
                                                const Positions& positions) const {
  const auto [q_turned, k_turned] = rotary_.rotate(q, k, positions);  // chapter 5's RoPE
  const std::int64_t T = q.size(2);
  // [T, D] broadcasts over batch and heads: queries grow smaller along the sequence, keys larger
  return {
      ag::mul(q_turned, xpos_scale(T, positions, head_width_, options_, +1, q.dtype())),
      ag::mul(k_turned, xpos_scale(k.size(2), positions, head_width_, options_, -1, k.dtype()))};
}
// [xpos-rotate]

XposEncoding::XposEncoding(std::int64_t head_width, const XposOptions& options)
    : head_width_(head_width), options_(options) {
  check_xpos_options(options);
  (void)rotary_width(head_width, rotary_options(options));  // D even and positive
}

std::shared_ptr<AttentionPositions> XposEncoding::make_attention_part(ag::Rng& rng) const {
  (void)rng;  // no parameters to draw
  return std::make_shared<XposPositions>(head_width_, options_);
}

std::vector<std::pair<std::string, Tensor>> XposEncoding::inspect(std::int64_t length) const {
  const std::int64_t planes = head_width_ / 2;
  const Tensor scale = xpos_scale(length, 0, head_width_, options_, +1, ag::Dtype::f64);
  // one column per plane: every other coordinate of the adjacent layout
  const Tensor per_plane =
      ag::reshape(ag::slice(ag::reshape(scale, {length, planes, 2}), 2, 0, 1), {length, planes});
  return {
      {"zeta", ag::from_vector(xpos_zeta(head_width_, options_.gamma), {planes}, ag::Dtype::f64)},
      {"frequencies",
       ag::from_vector(rope_frequencies(head_width_, options_.base), {planes}, ag::Dtype::f64)},
      {"query_scale", per_plane}};
}

}  // namespace pe
