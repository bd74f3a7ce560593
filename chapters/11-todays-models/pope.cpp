#include "chapters/11-todays-models/pope.hpp"

#include <algorithm>
#include <cmath>

#include "chapters/01-attention/encoding_registry.hpp"
#include "chapters/05-rope/rope.hpp"

namespace pe {

using ag::Tensor;

PopeMagnitude pope_magnitude_from(const std::string& name) {
  if (name == "softplus") return PopeMagnitude::softplus;
  if (name == "relu") return PopeMagnitude::relu;
  if (name == "none") return PopeMagnitude::none;
  throw ag::Error("pope: unknown magnitude '" + name + "' (expected softplus, relu or none)");
}

std::string pope_magnitude_name(PopeMagnitude magnitude) {
  switch (magnitude) {
    case PopeMagnitude::softplus:
      return "softplus";
    case PopeMagnitude::relu:
      return "relu";
    case PopeMagnitude::none:
      break;
  }
  return "none";
}

PopePhaseBias pope_phase_bias_from(const std::string& name) {
  if (name == "zero") return PopePhaseBias::zero;
  if (name == "uniform") return PopePhaseBias::uniform;
  if (name == "none") return PopePhaseBias::none;
  throw ag::Error("pope: unknown phase_bias '" + name + "' (expected zero, uniform or none)");
}

std::string pope_phase_bias_name(PopePhaseBias bias) {
  switch (bias) {
    case PopePhaseBias::zero:
      return "zero";
    case PopePhaseBias::uniform:
      return "uniform";
    case PopePhaseBias::none:
      break;
  }
  return "none";
}

// [pope-frequencies]
std::vector<double> pope_frequencies(std::int64_t head_width, double base) {
  ag::check(head_width >= 1, "pope", "head width must be at least 1, got ", head_width);
  // theta_c = base^(-c/D) = base^(-2c/2D): RoPE's frequencies of a head twice as wide
  return rope_frequencies(2 * head_width, base);
}
// [pope-frequencies]

void check_pope_options(const PopeOptions& options) {
  ag::check(std::isfinite(options.base) && options.base > 1, "pope",
            "base must be greater than 1, got ", options.base);
}

// [pope-polar]
Tensor pope_clamped_phase_bias(const Tensor& delta) {
  // -2 pi + relu(delta + 2 pi) - relu(delta): delta between the ends; below -2 pi both relus
  // are 0; above 0 they differ by 2 pi, which gives 0
  return ag::add(ag::sub(ag::relu(ag::add(delta, -kPopeLowestPhaseBias)), ag::relu(delta)),
                 kPopeLowestPhaseBias);
}

namespace {

Tensor magnitude_of(const Tensor& x, PopeMagnitude magnitude) {
  if (magnitude == PopeMagnitude::softplus) return ag::softplus(x);
  if (magnitude == PopeMagnitude::relu) return ag::relu(x);
  return x;
}

}  // namespace

Tensor pope_polar(const Tensor& x, const Positions& positions, const std::vector<double>& theta,
                  const Tensor& delta, PopeMagnitude magnitude) {
  const auto D = static_cast<std::int64_t>(theta.size());
  ag::check(x.dim() == 4 && x.size(3) == D, "pope", "expected x [B, H, T, ", D, "], got ",
            ag::shape_string(x.shape()));
  const std::int64_t H = x.size(1), T = x.size(2);
  // cos and sin of p theta_c for the positions of the call, [T, D]: computed in double (the
  // angle p theta_c is large), then rounded to x's dtype
  const auto [cos_table, sin_table] = rope_tables(positions.end(T), theta, x.dtype());
  Tensor c = rows_at(cos_table, positions, T, "pope");
  Tensor s = rows_at(sin_table, positions, T, "pope");
  if (delta.defined()) {
    ag::check(delta.dim() == 2 && delta.size(0) == H && delta.size(1) == D, "pope",
              "expected the phase bias [", H, ", ", D, "], got ", ag::shape_string(delta.shape()));
    // phi = p theta_c + delta_hc: cos phi = cos a cos b - sin a sin b, sin phi = sin a cos b +
    // cos a sin b, with b = delta [H, 1, D] against a = p theta [T, D] -> [H, T, D]
    const Tensor b = ag::reshape(delta, {H, 1, D});
    const Tensor cos_b = ag::cos(b), sin_b = ag::sin(b);
    const Tensor turned_c = ag::sub(ag::mul(c, cos_b), ag::mul(s, sin_b));
    s = ag::add(ag::mul(s, cos_b), ag::mul(c, sin_b));
    c = turned_c;
  }
  // x~ = mu e^(i phi) in real numbers: [mu cos phi, mu sin phi]
  const Tensor mu = magnitude_of(x, magnitude);
  return ag::concat({ag::mul(mu, c), ag::mul(mu, s)}, -1);
}
// [pope-polar]

PopePositions::PopePositions(std::int64_t heads, std::int64_t head_width, PopeOptions options,
                             ag::Rng& rng, ag::Dtype dtype)
    : heads_(heads), head_width_(head_width), options_(options) {
  ag::check(heads >= 1 && head_width >= 1, "pope", "needs at least 1 head of width 1, got ", heads,
            " heads of width ", head_width);
  check_pope_options(options);
  theta_ = pope_frequencies(head_width, options.base);
  if (options.phase_bias == PopePhaseBias::none) return;
  phase_bias = options.phase_bias == PopePhaseBias::uniform
                   ? ag::rand_uniform({heads, head_width}, rng, kPopeLowestPhaseBias, 0.0, dtype)
                   : ag::zeros({heads, head_width}, dtype);
  register_parameter("phase_bias", phase_bias);
}

Tensor PopePositions::phase_bias_in_force() const {
  return phase_bias.defined() ? pope_clamped_phase_bias(phase_bias) : Tensor();
}

// [pope-rotate]
std::pair<Tensor, Tensor> PopePositions::rotate(const Tensor& q, const Tensor& k,
                                                const Positions& positions) const {
  for (const Tensor* x : {&q, &k})
    ag::check(x->dim() == 4 && x->size(1) == heads_ && x->size(3) == head_width_, "pope",
              "expected q and k [B, ", heads_, ", T, ", head_width_, "], got ",
              ag::shape_string(q.shape()), " and ", ag::shape_string(k.shape()));
  // The query's phase is its position alone; the key's carries the layer's bias delta, so
  // the score's cosine reads (s - t) theta_c + delta_c. Inside a model q has the dtype of the
  // layer's parameters; only a query from outside (pe inspect's --vector, in float64, through
  // a fresh part) differs, and then reads delta in its own dtype, off the tape.
  Tensor delta = phase_bias_in_force();
  if (delta.defined() && delta.dtype() != k.dtype()) delta = delta.to(k.dtype());
  return {pope_polar(q, positions, theta_, Tensor(), options_.magnitude),
          pope_polar(k, positions, theta_, delta, options_.magnitude)};
}
// [pope-rotate]

PopeEncoding::PopeEncoding(std::int64_t heads, std::int64_t head_width, PopeOptions options,
                           ag::Dtype dtype)
    : heads_(heads), head_width_(head_width), options_(options), dtype_(dtype) {
  ag::check(heads >= 1 && head_width >= 1, "pope", "needs at least 1 head of width 1, got ", heads,
            " heads of width ", head_width);
  check_pope_options(options);
}

std::shared_ptr<AttentionPositions> PopeEncoding::make_attention_part(ag::Rng& rng) const {
  auto part = std::make_shared<PopePositions>(heads_, head_width_, options_, rng, dtype_);
  std::erase_if(parts_, [](const std::weak_ptr<PopePositions>& p) { return p.expired(); });
  parts_.push_back(part);
  return part;
}

std::vector<std::pair<std::string, Tensor>> PopeEncoding::inspect(std::int64_t length) const {
  (void)length;  // nothing of PoPE's depends on the length: its phases are p theta_c
  ag::NoGradGuard no_grad;
  const std::vector<double> theta = pope_frequencies(head_width_, options_.base);
  std::vector<std::pair<std::string, Tensor>> out = {
      {"frequencies", ag::from_vector(theta, {head_width_}, ag::Dtype::f64)}};
  if (options_.phase_bias == PopePhaseBias::none) return out;
  std::vector<std::shared_ptr<PopePositions>> alive;
  for (const auto& part : parts_)
    if (auto p = part.lock()) alive.push_back(p);
  if (alive.empty()) {  // no model: the start of one layer
    ag::Rng rng(0);
    alive.push_back(std::make_shared<PopePositions>(heads_, head_width_, options_, rng, dtype_));
  }
  std::vector<double> delta;
  for (const auto& part : alive) {
    const std::vector<double> layer = part->phase_bias_in_force().to_vector();
    delta.insert(delta.end(), layer.begin(), layer.end());
  }
  const auto layers = static_cast<std::int64_t>(alive.size());
  out.push_back(
      {"phase_bias", ag::from_vector(delta, {layers, heads_, head_width_}, ag::Dtype::f64)});
  return out;
}

namespace {

std::string text_option(const EncodingSpec& spec, const std::string& key,
                        const std::string& fallback) {
  const auto it = spec.options.find(key);
  return it == spec.options.end() ? fallback : it->second;
}

}  // namespace

// [register-pope]
void register_pope() {
  register_encoding(
      {"pope",
       "11",
       "PoPE: magnitudes softplus(q_c), softplus(k_c) carry the content, phases p theta_c the "
       "position: score sum_c mu_q mu_k cos((n - m) theta_c + delta_c), delta learned",
       {"base", "magnitude", "phase_bias"},
       [](const EncodingSpec& spec, ag::Rng&) {
         PopeOptions options;
         options.base = number_option(spec, "pope", "base", options.base);
         options.magnitude = pope_magnitude_from(
             text_option(spec, "magnitude", pope_magnitude_name(options.magnitude)));
         options.phase_bias = pope_phase_bias_from(
             text_option(spec, "phase_bias", pope_phase_bias_name(options.phase_bias)));
         return std::make_shared<PopeEncoding>(spec.model.heads, head_width_of(spec, "pope"),
                                               options, spec.dtype);
       }});
}
// [register-pope]

}  // namespace pe
