#include "chapters/08-length/rope_scaling.hpp"

#include <algorithm>
#include <cmath>

#include "ag/tensor.hpp"
#include "chapters/01-attention/encoding_registry.hpp"

namespace pe {

RopeScaling rope_scaling_from(const std::string& name) {
  if (name == "none") return RopeScaling::none;
  if (name == "linear") return RopeScaling::linear;
  if (name == "ntk") return RopeScaling::ntk;
  if (name == "dynamic") return RopeScaling::dynamic;
  if (name == "yarn") return RopeScaling::yarn;
  throw ag::Error("rope: unknown scaling '" + name +
                  "' (expected none, linear, ntk, dynamic or yarn)");
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
  }
  return "none";
}

void check_rope_scaling(const RopeScalingOptions& o) {
  const std::string method = "scaling=" + rope_scaling_name(o.method);
  ag::check(std::isfinite(o.scale) && o.scale >= 1, "rope", "scale must be at least 1 (", method,
            "), got ", o.scale, ": a scale below 1 would shrink the context");
  if (o.method == RopeScaling::dynamic || o.method == RopeScaling::yarn)
    ag::check(o.train_length >= 1, "rope", method,
              " needs train_length=L, the length the model was trained at");
  if (o.method == RopeScaling::yarn)
    ag::check(std::isfinite(o.alpha) && std::isfinite(o.beta) && o.alpha > 0 && o.alpha < o.beta,
              "rope", "yarn needs 0 < alpha < beta, got alpha ", o.alpha, " and beta ", o.beta);
}

double rope_scale_at(const RopeScalingOptions& options, std::int64_t length) {
  switch (options.method) {
    case RopeScaling::none:
      return 1;
    case RopeScaling::dynamic:
      return std::max(1.0, double(length) / double(options.train_length));  // s = max(1, L/L_train)
    default:
      return options.scale;
  }
}

double yarn_ramp(double r, double alpha, double beta) {
  // TASK 8.1 begin: the frequencies of each scaling rule
  return std::clamp((r - alpha) / (beta - alpha), 0.0, 1.0);
  // TASK 8.1 end
}

// [rope-scaling]
std::vector<double> scaled_rope_frequencies(std::int64_t dim, double base,
                                            const RopeScalingOptions& options,
                                            std::int64_t length) {
  check_rope_scaling(options);
  if (options.method == RopeScaling::none) return rope_frequencies(dim, base);  // plain RoPE
  // TASK 8.1 begin: the frequencies of each scaling rule
  const double s = rope_scale_at(options, length), d = double(dim);
  switch (options.method) {
    case RopeScaling::none:  // returned above
      return rope_frequencies(dim, base);
    case RopeScaling::ntk:
    case RopeScaling::dynamic:  // base' = base * s^(d/(d-2)); d = 2 has no such base
      ag::check(dim > 2, "rope", "scaling=", rope_scaling_name(options.method),
                " needs a rotated width above 2, got ", dim);
      return rope_frequencies(dim, base * std::pow(s, d / (d - 2)));
    case RopeScaling::linear:
    case RopeScaling::yarn:
      break;
  }
  std::vector<double> theta = rope_frequencies(dim, base);
  for (double& t : theta) {
    if (options.method == RopeScaling::linear) {
      t /= s;  // m theta / s = (m / s) theta: positions divided by s
      continue;
    }
    // YaRN: r = L_train / lambda turns over the training length, lambda = 2 pi / theta.
    // Frequencies that turn many times (r > beta) saw every angle in training and are kept;
    // those that turn less than alpha times are interpolated; a linear ramp in between.
    const double r = double(options.train_length) * t / (2 * M_PI);
    const double gamma = yarn_ramp(r, options.alpha, options.beta);
    t = (1 - gamma) * t / s + gamma * t;
  }
  return theta;
  // TASK 8.1 end
}
// [rope-scaling]

double rope_attention_factor(const RopeScalingOptions& options, std::int64_t length) {
  if (options.method != RopeScaling::yarn) return 1;
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
  // An option that the chosen rule would ignore is refused: it is a mistake in a command line.
  const RopeScaling m = scaling.method;
  const std::string rule = "scaling=" + rope_scaling_name(m);
  const bool uses_scale =
      m == RopeScaling::linear || m == RopeScaling::ntk || m == RopeScaling::yarn;
  const bool uses_length = m == RopeScaling::dynamic || m == RopeScaling::yarn;
  ag::check(!uses_scale || given("scale"), "rope", rule, " needs scale=S (S >= 1: how many ",
            "times the training length to reach)");
  ag::check(uses_scale || !given("scale"), "rope", "option scale does nothing with ", rule,
            m == RopeScaling::dynamic ? " (it computes s = max(1, L / train_length))"
                                      : " (linear, ntk and yarn take it)");
  ag::check(uses_length || !given("train_length"), "rope", "option train_length does nothing ",
            "with ", rule, " (dynamic and yarn take it)");
  for (const char* key : {"alpha", "beta"})
    ag::check(m == RopeScaling::yarn || !given(key), "rope", "option ", key, " does nothing with ",
              rule, " (yarn takes it)");
  check_rope_scaling(scaling);
  return scaling;
}

void register_ch08_encodings() {
  extend_rope({"scaling", "scale", "train_length", "alpha", "beta"}, [](const EncodingSpec& spec) {
    return rope_scaling_rule(rope_scaling_options(spec));
  });
}

}  // namespace pe
