#include "chapters/08-length/rope_scaling.hpp"

#include <algorithm>
#include <cmath>

#include "ag/tensor.hpp"
#include "chapters/01-attention/encoding_registry.hpp"

namespace pe {

RopeScaling rope_scaling_from(const std::string& name) {
  for (RopeScaling m : {RopeScaling::none, RopeScaling::linear, RopeScaling::ntk,
                        RopeScaling::dynamic, RopeScaling::yarn, RopeScaling::yarn_paper})
    if (name == rope_scaling_name(m)) return m;
  throw ag::Error("rope: unknown scaling '" + name +
                  "' (expected none, linear, ntk, dynamic, yarn or yarn-paper)");
}

std::string rope_scaling_name(RopeScaling scaling) {
  switch (scaling) {
    case RopeScaling::none:
      return "none";
    case RopeScaling::linear:
      return "linear";
    case RopeScaling::ntk:
      return "ntk";
    case RopeScaling::dynamic:
      return "dynamic";
    case RopeScaling::yarn:
      return "yarn";
    case RopeScaling::yarn_paper:
      return "yarn-paper";
  }
  return "none";
}

namespace {
bool is_yarn(RopeScaling m) {  // both YaRNs take the same options but truncate
  return m == RopeScaling::yarn || m == RopeScaling::yarn_paper;
}
}  // namespace

void check_rope_scaling(const RopeScalingOptions& o) {
  const std::string method = "scaling=" + rope_scaling_name(o.method);
  ag::check(std::isfinite(o.scale) && o.scale >= 1, "rope", "scale must be at least 1 (", method,
            "), got ", o.scale, ": a scale below 1 would shrink the context");
  if (o.method == RopeScaling::dynamic || is_yarn(o.method))
    ag::check(o.train_length >= 1, "rope", method,
              " needs train_length=L, the length the model was trained at");
  if (is_yarn(o.method))
    ag::check(std::isfinite(o.alpha) && std::isfinite(o.beta) && o.alpha > 0 && o.alpha < o.beta,
              "rope", rope_scaling_name(o.method), " needs 0 < alpha < beta, got alpha ", o.alpha,
              " and beta ", o.beta);
}

double rope_scale_at(const RopeScalingOptions& options, std::int64_t length) {
  switch (options.method) {
    case RopeScaling::none:
      return 1;
    case RopeScaling::dynamic: {
      // Hugging Face's dynamic NTK: s T / L_train - (s - 1) for T = max(length, L_train), which
      // is 1 at the training length and grows by s for every further L_train positions.
      const double s = options.scale, T = double(std::max(length, options.train_length));
      return s * T / double(options.train_length) - (s - 1);
    }
    default:
      return options.scale;
  }
}

double yarn_ramp(double x, double a, double b) {
  // TASK 8.1 begin: the frequencies of each scaling rule
  return std::clamp((x - a) / (b - a), 0.0, 1.0);
  // TASK 8.1 end
}

double yarn_correction_dim(double rotations, std::int64_t dim, double base,
                           std::int64_t train_length) {
  // TASK 8.1 begin: the frequencies of each scaling rule
  // r_i = L_train base^(-2i/d) / (2 pi) solved for i
  return double(dim) * std::log(double(train_length) / (rotations * 2 * M_PI)) /
         (2 * std::log(base));
  // TASK 8.1 end
}

std::pair<double, double> yarn_correction_range(std::int64_t dim, double base,
                                                const RopeScalingOptions& options) {
  // TASK 8.1 begin: the frequencies of each scaling rule
  // The fast planes (small i) turn many times: the ramp starts where they turn beta times.
  double low = yarn_correction_dim(options.beta, dim, base, options.train_length);
  double high = yarn_correction_dim(options.alpha, dim, base, options.train_length);
  if (options.truncate) {  // whole planes, rounded outwards
    low = std::floor(low);
    high = std::ceil(high);
  }
  // The implementations clamp high at d - 1 although the planes end at d/2 - 1: when high
  // lies past the last plane, that plane stays partly kept, here too.
  return {std::max(low, 0.0), std::min(high, double(dim - 1))};
  // TASK 8.1 end
}

// [rope-scaling]
std::vector<double> scaled_rope_frequencies(std::int64_t dim, double base,
                                            const RopeScalingOptions& options,
                                            std::int64_t length) {
  check_rope_scaling(options);
  if (options.method == RopeScaling::none) return rope_frequencies(dim, base);  // plain RoPE
  // TASK 8.1 begin: the frequencies of each scaling rule
  const RopeScaling m = options.method;
  const double s = rope_scale_at(options, length), d = double(dim);
  if (m == RopeScaling::ntk || m == RopeScaling::dynamic) {
    // base' = base * s^(d/(d-2)) divides the slowest plane's theta by exactly s and leaves
    // theta_0 = 1; d = 2 has no such base
    ag::check(dim > 2, "rope", "scaling=", rope_scaling_name(m),
              " needs a rotated width above 2, got ", dim);
    return rope_frequencies(dim, base * std::pow(s, d / (d - 2)));
  }
  std::vector<double> theta = rope_frequencies(dim, base);
  if (m == RopeScaling::linear) {
    for (double& t : theta) t /= s;  // m theta / s = (m / s) theta: positions divided by s
    return theta;
  }
  // YaRN keeps a share gamma_i of each plane's frequency and interpolates the rest. Planes that
  // turn many times over the training length saw every angle in training (gamma = 1, kept);
  // those that turn less than once did not (gamma = 0, theta / s).
  auto [low, high] = yarn_correction_range(dim, base, options);
  if (low == high) high += 0.001;  // as the implementations do, against a division by zero
  for (std::size_t i = 0; i < theta.size(); ++i) {
    double gamma;
    if (m == RopeScaling::yarn_paper) {  // linear in the rotations r_i = L_train theta_i / 2 pi
      const double r = double(options.train_length) * theta[i] / (2 * M_PI);
      gamma = yarn_ramp(r, options.alpha, options.beta);
    } else {  // linear in the plane index i, from low (kept) to high (interpolated)
      gamma = 1 - yarn_ramp(double(i), low, high);
    }
    theta[i] = (1 - gamma) * theta[i] / s + gamma * theta[i];
  }
  return theta;
  // TASK 8.1 end
}
// [rope-scaling]

double rope_attention_factor(const RopeScalingOptions& options, std::int64_t length) {
  if (!is_yarn(options.method)) return 1;
  // TASK 8.2 begin: YaRN's temperature
  return 0.1 * std::log(rope_scale_at(options, length)) + 1;  // sqrt(1/t) = 0.1 ln s + 1
  // TASK 8.2 end
}

ScaledRope::ScaledRope(RopeScalingOptions options) : options_(options) {
  check_rope_scaling(options_);
}

std::vector<double> ScaledRope::frequencies(std::int64_t dim, double base,
                                            std::int64_t length) const {
  return scaled_rope_frequencies(dim, base, options_, length);
}

double ScaledRope::attention_factor(std::int64_t length) const {
  return rope_attention_factor(options_, length);
}

double ScaledRope::scale_at(std::int64_t length) const { return rope_scale_at(options_, length); }

void ScaledRope::check_width(std::int64_t width) const {
  const RopeScaling method = options_.method;
  ag::check(width > 2 || (method != RopeScaling::ntk && method != RopeScaling::dynamic), "rope",
            "scaling=", rope_scaling_name(method), " changes base by s^(d/(d-2)): it needs a ",
            "rotated width above 2, got ", width);
}

std::shared_ptr<const RopeFrequencyRule> rope_scaling_rule(const RopeScalingOptions& options) {
  check_rope_scaling(options);
  if (options.method == RopeScaling::none) return nullptr;
  return std::make_shared<ScaledRope>(options);
}

RopeScalingOptions rope_scaling_of(const RotaryOptions& options) {
  const auto* scaled = dynamic_cast<const ScaledRope*>(options.rule.get());
  return scaled ? scaled->options() : RopeScalingOptions{};
}

RopeScalingOptions rope_scaling_options(const EncodingSpec& spec) {
  RopeScalingOptions scaling;
  const auto given = [&](const char* key) { return spec.options.count(key) > 0; };
  if (given("scaling")) scaling.method = rope_scaling_from(spec.options.at("scaling"));
  scaling.scale = number_option(spec, "rope", "scale", scaling.scale);
  scaling.train_length =
      integer_option(spec, "rope", "train_length", scaling.train_length, 1, kLargestTableOption);
  scaling.alpha = number_option(spec, "rope", "alpha", scaling.alpha);
  scaling.beta = number_option(spec, "rope", "beta", scaling.beta);
  scaling.truncate = bool_option(spec, "rope", "truncate", scaling.truncate);
  // An option that the chosen rule would ignore is refused: it is a mistake in a command line.
  const RopeScaling m = scaling.method;
  const std::string rule = "scaling=" + rope_scaling_name(m);
  const bool needs_scale = m == RopeScaling::linear || m == RopeScaling::ntk || is_yarn(m);
  const bool uses_length = m == RopeScaling::dynamic || is_yarn(m);
  ag::check(!needs_scale || given("scale"), "rope", rule, " needs scale=S (S >= 1: how many ",
            "times the training length to reach)");
  ag::check(needs_scale || m == RopeScaling::dynamic || !given("scale"), "rope",
            "option scale does nothing with ", rule,
            " (linear, ntk, dynamic, yarn and yarn-paper take it)");
  ag::check(uses_length || !given("train_length"), "rope", "option train_length does nothing ",
            "with ", rule, " (dynamic, yarn and yarn-paper take it)");
  for (const char* key : {"alpha", "beta"})
    ag::check(is_yarn(m) || !given(key), "rope", "option ", key, " does nothing with ", rule,
              " (yarn and yarn-paper take it)");
  ag::check(m == RopeScaling::yarn || !given("truncate"), "rope",
            "option truncate does nothing with ", rule, " (yarn takes it)");
  check_rope_scaling(scaling);
  return scaling;
}

void register_ch08_encodings() {
  extend_rope(
      {"scaling", "scale", "train_length", "alpha", "beta", "truncate"},
      [](const EncodingSpec& spec) { return rope_scaling_rule(rope_scaling_options(spec)); },
      "chapter 8");
}

}  // namespace pe
