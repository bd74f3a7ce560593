#include "chapters/11-todays-models/hf_rope_rule.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "ag/error.hpp"
#include "ag/numbers.hpp"
#include "chapters/01-attention/encoding_registry.hpp"

namespace pe {

HfRope::HfRope(HfRopeParameters parameters) : parameters_(std::move(parameters)) {
  check_hf_rope_fields(parameters_);
}

namespace {

// The parameters for a rotated width and base that RoPE gives.
HfRopeParameters at_width(HfRopeParameters p, std::int64_t dim, double base) {
  p.head_dim = dim;
  p.rope_theta = base;
  return p;
}

}  // namespace

std::vector<double> HfRope::frequencies(std::int64_t dim, double base, std::int64_t length) const {
  return hf_rope_frequencies(at_width(parameters_, dim, base), length).inv_freq;
}

double HfRope::attention_factor(std::int64_t length) const {
  (void)length;  // yarn's and longrope's factors depend on the configured lengths only
  return hf_rope_attention_factor(parameters_);
}

double HfRope::scale_at(std::int64_t length) const { return hf_rope_scale(parameters_, length); }

void HfRope::check_width(std::int64_t rotated_width) const {
  check_hf_rope(at_width(parameters_, rotated_width, parameters_.rope_theta));
}

const std::vector<std::string>& hf_rope_option_names() {
  static const std::vector<std::string> names = {"rope_type",
                                                 "factor",
                                                 "original_max_position_embeddings",
                                                 "max_position_embeddings",
                                                 "attention_factor",
                                                 "beta_fast",
                                                 "beta_slow",
                                                 "mscale",
                                                 "mscale_all_dim",
                                                 "truncate",
                                                 "low_freq_factor",
                                                 "high_freq_factor",
                                                 "short_factor",
                                                 "long_factor",
                                                 "partial_rotary_factor"};
  return names;
}

namespace {

// The options each type reads besides rope_type (transformers' required and optional keys;
// max_position_embeddings where it stands in for a missing field).
const std::vector<std::string>& options_of(HfRopeType type) {
  static const std::map<HfRopeType, std::vector<std::string>> options = {
      {HfRopeType::standard, {}},
      {HfRopeType::linear, {"factor"}},
      {HfRopeType::dynamic, {"factor", "max_position_embeddings"}},
      {HfRopeType::yarn,
       {"factor", "original_max_position_embeddings", "max_position_embeddings", "attention_factor",
        "beta_fast", "beta_slow", "mscale", "mscale_all_dim", "truncate"}},
      {HfRopeType::longrope,
       {"factor", "original_max_position_embeddings", "max_position_embeddings", "attention_factor",
        "short_factor", "long_factor"}},
      {HfRopeType::llama3,
       {"factor", "original_max_position_embeddings", "max_position_embeddings", "low_freq_factor",
        "high_freq_factor"}},
      {HfRopeType::proportional, {"factor", "partial_rotary_factor"}}};
  return options.at(type);
}

std::string listed(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "" : ", ") + name;
  return out.empty() ? "none" : out;
}

// "1.08,1.11,1.14": one number per plane, each through the one parser.
std::vector<double> number_list_option(const EncodingSpec& spec, const std::string& key) {
  std::vector<double> numbers;
  const std::string& text = spec.options.at(key);
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, comma - start);
    double value = 0;
    ag::check(ag::parse_double(item, value) && std::isfinite(value), "rope", "option ", key,
              " must be finite numbers separated by commas, got '", item, "' in '", text, "'");
    numbers.push_back(value);
    if (comma == text.size()) return numbers;
    start = comma + 1;
  }
}

}  // namespace

std::optional<HfRopeParameters> hf_rope_options(const EncodingSpec& spec) {
  const auto given = [&](const std::string& key) { return spec.options.count(key) > 0; };
  const std::vector<std::string>& names = hf_rope_option_names();
  const auto first = std::find_if(names.begin(), names.end(), given);
  if (first == names.end()) return std::nullopt;
  ag::check(given("rope_type"), "rope", "option ", *first, " needs rope_type=TYPE (one of ",
            "Hugging Face's: default, linear, dynamic, yarn, longrope, llama3, proportional)");
  HfRopeParameters p;
  p.type = hf_rope_type_from(spec.options.at("rope_type"));
  const std::string rule = "rope_type=" + hf_rope_type_name(p.type);
  const std::vector<std::string>& takes = options_of(p.type);
  for (const std::string& key : names) {
    if (key == "rope_type" || !given(key) ||
        std::find(takes.begin(), takes.end(), key) != takes.end())
      continue;
    ag::check(key != "partial_rotary_factor", "rope", "option partial_rotary_factor is ",
              "rope_type=proportional's p; with ", rule,
              " the rotated fraction is rope's own option fraction");
    throw ag::Error("rope: option " + key + " does nothing with " + rule + " (it takes " +
                    listed(takes) + ")");
  }
  constexpr std::int64_t kLongest = std::int64_t(1) << 40;  // positions: a bound on typos
  const auto number = [&](const char* key, std::optional<double>& field) {
    if (given(key)) field = number_option(spec, "rope", key, 0);
  };
  number("factor", p.factor);
  number("attention_factor", p.attention_factor);
  number("beta_fast", p.beta_fast);
  number("beta_slow", p.beta_slow);
  number("mscale", p.mscale);
  number("mscale_all_dim", p.mscale_all_dim);
  number("low_freq_factor", p.low_freq_factor);
  number("high_freq_factor", p.high_freq_factor);
  if (given("original_max_position_embeddings"))
    p.original_max_position_embeddings =
        integer_option(spec, "rope", "original_max_position_embeddings", 0, 1, kLongest);
  p.max_position_embeddings =
      integer_option(spec, "rope", "max_position_embeddings", 0, 1, kLongest);
  p.truncate = bool_option(spec, "rope", "truncate", p.truncate);
  p.partial_rotary_factor =
      number_option(spec, "rope", "partial_rotary_factor", p.partial_rotary_factor);
  if (given("short_factor")) p.short_factor = number_list_option(spec, "short_factor");
  if (given("long_factor")) p.long_factor = number_list_option(spec, "long_factor");
  if (p.type == HfRopeType::proportional) {
    const double fraction = number_option(spec, "rope", "fraction", 1);
    ag::check(fraction == 1, "rope", rule, " spreads its planes over the whole head: it needs ",
              "fraction=1 (partial_rotary_factor says which planes turn), got fraction=", fraction);
    ag::check(p.partial_rotary_factor > 0 && p.partial_rotary_factor <= 1, "proportional",
              "partial_rotary_factor must lie in (0, 1], got ", p.partial_rotary_factor);
  }
  check_hf_rope_fields(p);
  return p;
}

std::shared_ptr<const RopeFrequencyRule> hf_rope_rule(const HfRopeParameters& parameters) {
  check_hf_rope_fields(parameters);
  if (parameters.type == HfRopeType::standard) return nullptr;
  return std::make_shared<HfRope>(parameters);
}

void register_hf_rope_options() {
  extend_rope(
      hf_rope_option_names(),
      [](const EncodingSpec& spec) -> std::shared_ptr<const RopeFrequencyRule> {
        const std::optional<HfRopeParameters> parameters = hf_rope_options(spec);
        return parameters ? hf_rope_rule(*parameters) : nullptr;
      },
      "chapter 11");
}

}  // namespace pe
