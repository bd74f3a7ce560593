#include "chapters/05-rope/rope.hpp"

#include <algorithm>
#include <cmath>

#include "chapters/01-attention/encoding_registry.hpp"

namespace pe {

using ag::Shape;
using ag::Tensor;

RotaryLayout rotary_layout_from(const std::string& name) {
  if (name == "adjacent") return RotaryLayout::adjacent;
  if (name == "half") return RotaryLayout::half;
  throw ag::Error("rope: unknown layout '" + name + "' (expected adjacent or half)");
}

std::string rotary_layout_name(RotaryLayout layout) {
  return layout == RotaryLayout::adjacent ? "adjacent" : "half";
}

// [rope-tables]
std::vector<double> rope_frequencies(std::int64_t dim, double base) {
  ag::check(dim > 0 && dim % 2 == 0, "rope_frequencies",
            "the rotated width must be even and positive, got ", dim);
  ag::check(base > 1, "rope_frequencies", "base must be greater than 1, got ", base);
  // TASK 5.1 begin: the rotation frequencies
  std::vector<double> theta(static_cast<std::size_t>(dim / 2));
  for (std::int64_t i = 0; i < dim / 2; ++i)
    theta[i] = std::pow(base, -2.0 * double(i) / double(dim));  // theta_i = base^(-2i/d)
  return theta;
  // TASK 5.1 end
}

std::pair<Tensor, Tensor> rope_tables(std::int64_t length, std::int64_t dim, double base,
                                      ag::Dtype dtype) {
  return rope_tables(length, rope_frequencies(dim, base), dtype);
}

std::pair<Tensor, Tensor> rope_tables(std::int64_t length, const std::vector<double>& theta,
                                      ag::Dtype dtype) {
  ag::check(length >= 0, "rope_tables", "length must not be negative, got ", length);
  // TASK 5.2 begin: the tables of cosines and sines
  const auto pairs = static_cast<std::int64_t>(theta.size());
  std::vector<double> cos(static_cast<std::size_t>(length * pairs)), sin(cos.size());
  for (std::int64_t m = 0; m < length; ++m)
    for (std::int64_t i = 0; i < pairs; ++i) {
      const double angle = double(m) * theta[i];  // m theta_i, in double for long positions
      cos[m * pairs + i] = std::cos(angle);
      sin[m * pairs + i] = std::sin(angle);
    }
  return {ag::from_vector(cos, {length, pairs}, dtype),
          ag::from_vector(sin, {length, pairs}, dtype)};
  // TASK 5.2 end
}
// [rope-tables]

namespace {

Shape with_last(Shape shape, std::vector<std::int64_t> last) {
  shape.pop_back();
  shape.insert(shape.end(), last.begin(), last.end());
  return shape;
}

}  // namespace

// [apply-rotary]
Tensor apply_rotary(const Tensor& x, const Positions& positions, const Tensor& cos,
                    const Tensor& sin, RotaryLayout layout) {
  ag::check(x.dim() >= 2, "apply_rotary", "x must be [..., T, D], got ",
            ag::shape_string(x.shape()));
  ag::check(cos.dim() == 2 && cos.shape() == sin.shape(), "apply_rotary",
            "cos and sin must both be [L, d/2], got ", ag::shape_string(cos.shape()), " and ",
            ag::shape_string(sin.shape()));
  const std::int64_t T = x.size(-2), D = x.size(-1), half = cos.size(1), d = 2 * half;
  ag::check(d <= D, "apply_rotary", "tables rotate ", d, " coordinates but x has only ", D);
  ag::check(positions.end(T) <= cos.size(0), "apply_rotary", "positions ", positions.first(),
            " .. ", positions.end(T) - 1, " are not all in the tables of length ", cos.size(0));
  ag::check(cos.dtype() == x.dtype() && sin.dtype() == x.dtype(), "apply_rotary", "tables are ",
            ag::dtype_name(cos.dtype()), ", x is ", ag::dtype_name(x.dtype()));

  const Tensor rotated = d == D ? x : ag::slice(x, -1, 0, d);
  // a_i, b_i: the two coordinates of plane i, each [..., T, d/2]
  Tensor a, b;
  if (layout == RotaryLayout::adjacent) {
    const Tensor pairs = ag::reshape(rotated, with_last(rotated.shape(), {half, 2}));
    a = ag::reshape(ag::slice(pairs, -1, 0, 1), with_last(rotated.shape(), {half}));
    b = ag::reshape(ag::slice(pairs, -1, 1, 2), with_last(rotated.shape(), {half}));
  } else {
    a = ag::slice(rotated, -1, 0, half);
    b = ag::slice(rotated, -1, half, d);
  }
  // TASK 5.3 begin: rotate the pairs
  const Tensor c = rows_at(cos, positions, T, "apply_rotary");  // [T, d/2]: rows of positions m
  const Tensor s = rows_at(sin, positions, T, "apply_rotary");
  // (a, b) -> (a cos - b sin, a sin + b cos): the plane turned by m theta_i, anticlockwise
  const Tensor a_turned = ag::sub(ag::mul(a, c), ag::mul(b, s));
  const Tensor b_turned = ag::add(ag::mul(a, s), ag::mul(b, c));
  Tensor out;
  if (layout == RotaryLayout::adjacent) {
    const Shape column = with_last(a.shape(), {half, 1});
    out =
        ag::reshape(ag::concat({ag::reshape(a_turned, column), ag::reshape(b_turned, column)}, -1),
                    rotated.shape());
  } else {
    out = ag::concat({a_turned, b_turned}, -1);
  }
  return d == D ? out : ag::concat({out, ag::slice(x, -1, d, D)}, -1);
  // TASK 5.3 end
}
// [apply-rotary]

std::vector<std::int64_t> adjacent_to_half_permutation(std::int64_t head_width, std::int64_t dim) {
  ag::check(dim > 0 && dim % 2 == 0 && dim <= head_width, "adjacent_to_half_permutation",
            "rotated width ", dim, " must be even, positive and at most the head width ",
            head_width);
  std::vector<std::int64_t> p(static_cast<std::size_t>(head_width));
  for (std::int64_t i = 0; i < dim / 2; ++i) {
    p[i] = 2 * i;                // half's first coordinate of plane i is adjacent's 2i
    p[dim / 2 + i] = 2 * i + 1;  // and its second is adjacent's 2i + 1
  }
  for (std::int64_t j = dim; j < head_width; ++j) p[j] = j;
  return p;
}

std::int64_t rotary_width(std::int64_t head_width, const RotaryOptions& options) {
  ag::check(head_width > 0, "rope", "head width must be positive, got ", head_width);
  ag::check(options.fraction > 0 && options.fraction <= 1, "rope",
            "fraction must lie in (0, 1], got ", options.fraction);
  // GPT-NeoX rounds down: rotary_ndims = int(head_dim * rotary_pct). The small margin keeps
  // 0.3 * 10 (= 3.0000000000000004 or 2.9999999999999996) from landing one below.
  const auto width =
      static_cast<std::int64_t>(std::floor(options.fraction * double(head_width) + 1e-9));
  ag::check(width > 0 && width % 2 == 0, "rope", "the rotated width ",
            "floor(fraction * D) = floor(", options.fraction, " * ", head_width, ") = ", width,
            " must be even and positive: coordinates are rotated in pairs");
  ag::check(options.base > 1, "rope", "base must be greater than 1, got ", options.base);
  if (options.rule) options.rule->check_width(width);
  return width;
}

namespace {

// theta_i as trained, or as chapter 8's rule changes them for a pass over `length` positions.
std::vector<double> frequencies_in_force(const RotaryOptions& options, std::int64_t dim,
                                         std::int64_t length) {
  if (!options.rule) return rope_frequencies(dim, options.base);
  return options.rule->frequencies(dim, options.base, length);
}

}  // namespace

RotaryPositions::RotaryPositions(std::int64_t head_width, RotaryOptions options)
    : head_width_(head_width),
      rotated_width_(rotary_width(head_width, options)),
      options_(options) {}

// [rope-rotate]
std::pair<Tensor, Tensor> RotaryPositions::rotate(const Tensor& q, const Tensor& k,
                                                  const Positions& positions) const {
  ag::check(q.dim() == 4 && q.size(3) == head_width_ && k.dim() == 4 && k.size(3) == head_width_,
            "rope", "expected q and k [B, H, T, ", head_width_, "], got ",
            ag::shape_string(q.shape()), " and ", ag::shape_string(k.shape()));
  // Tables for positions 0 .. L-1, L = the last position + 1 (offset+T when contiguous), in
  // the dtype of q (float64 under gradcheck). They cost L * d/2 cosines and sines, little
  // beside the products of attention. A scaling rule (chapter 8) changes the frequencies;
  // dynamic NTK chooses them by L.
  const std::int64_t length = positions.end(q.size(2));
  const std::vector<double> theta = frequencies_in_force(options_, rotated_width_, length);
  const auto [cos, sin] = rope_tables(length, theta, q.dtype());
  const Tensor q_turned = apply_rotary(q, positions, cos, sin, options_.layout);
  const Tensor k_turned = apply_rotary(k, positions, cos, sin, options_.layout);
  // YaRN's temperature: q and k each times 0.1 ln s + 1, so the scores times its square
  const double factor = options_.rule ? options_.rule->attention_factor(length) : 1.0;
  if (factor == 1) return {q_turned, k_turned};
  return {ag::mul(q_turned, factor), ag::mul(k_turned, factor)};
}
// [rope-rotate]

RotaryEncoding::RotaryEncoding(std::int64_t head_width, RotaryOptions options)
    : head_width_(head_width),
      rotated_width_(rotary_width(head_width, options)),
      options_(options) {}

std::shared_ptr<AttentionPositions> RotaryEncoding::make_attention_part(ag::Rng& rng) const {
  (void)rng;  // no parameters to draw
  return std::make_shared<RotaryPositions>(head_width_, options_);
}

std::vector<std::pair<std::string, Tensor>> RotaryEncoding::inspect(std::int64_t length) const {
  const std::vector<double> theta = frequencies_in_force(options_, rotated_width_, length);
  const auto [cos, sin] = rope_tables(length, theta, ag::Dtype::f64);
  const Tensor unit =
      ag::full({1, length, head_width_}, 1.0 / std::sqrt(double(head_width_)), ag::Dtype::f64);
  const Tensor example =
      ag::reshape(apply_rotary(unit, 0, cos, sin, options_.layout), {length, head_width_});
  const RopeFrequencyRule* rule = options_.rule.get();
  return {{"cos", cos},
          {"sin", sin},
          {"rotated_example", example},
          {"frequencies", ag::from_vector(theta, {rotated_width_ / 2}, ag::Dtype::f64)},
          {"scale", ag::from_vector({rule ? rule->scale_at(length) : 1.0}, {1}, ag::Dtype::f64)},
          {"attention_factor",
           ag::from_vector({rule ? rule->attention_factor(length) : 1.0}, {1}, ag::Dtype::f64)}};
}

namespace {

// The options of "rope" that a later chapter added, and how it reads them (extend_rope).
struct RopeExtension {
  std::vector<std::string> option_names;
  RopeRuleReader read;
  std::string owner;  // "chapter 8": who added them, for the messages
};

// Every extension, in the order the chapters added them.
std::vector<RopeExtension>& rope_extensions() {
  static std::vector<RopeExtension> extensions;
  return extensions;
}

bool takes(const RopeExtension& extension, const std::string& option) {
  return std::find(extension.option_names.begin(), extension.option_names.end(), option) !=
         extension.option_names.end();
}

// Whether two extensions take `option` (chapter 8's and chapter 11's truncate): it then says
// nothing about which of them the spec means.
bool shared(const std::string& option) {
  const auto& all = rope_extensions();
  return std::count_if(all.begin(), all.end(), [&](const RopeExtension& extension) {
           return takes(extension, option);
         }) > 1;
}

// The rule of the one extension that the spec's options address, or null. An option that only
// one extension takes (chapter 8's scaling, chapter 11's rope_type) addresses it; options of
// two extensions are one line of error, since each rule sets the frequencies all by itself;
// a shared option goes with the extension the others address.
std::shared_ptr<const RopeFrequencyRule> extension_rule(const EncodingSpec& spec) {
  const RopeExtension* chosen = nullptr;
  std::string chosen_by;  // "scaling=yarn": the option that chose it, as given
  for (const RopeExtension& extension : rope_extensions())
    for (const std::string& name : extension.option_names) {
      const auto given = spec.options.find(name);
      if (given == spec.options.end() || shared(name)) continue;
      const std::string option = name + "=" + given->second;
      ag::check(!chosen, "rope", chosen_by, " (", chosen ? chosen->owner : "", ") and ", option,
                " (", extension.owner, ") cannot both be given: each rule sets RoPE's ",
                "frequencies by itself");
      chosen = &extension;
      chosen_by = option;
      break;
    }
  if (chosen) return chosen->read(spec);
  // No extension addressed: each reader returns null unless a shared option is given alone,
  // which the first extension that takes it refuses in its own words.
  for (const RopeExtension& extension : rope_extensions())
    if (auto rule = extension.read(spec)) return rule;
  return nullptr;
}

}  // namespace

void register_ch05_encodings() {
  std::vector<std::string> options = {"base", "layout", "fraction"};
  for (const RopeExtension& extension : rope_extensions())
    for (const std::string& name : extension.option_names)
      if (std::find(options.begin(), options.end(), name) == options.end()) options.push_back(name);
  register_encoding(
      {"rope", "05",
       "rotary: q and k turned by position-proportional angles, so q.k depends on n - m", options,
       [](const EncodingSpec& spec, ag::Rng&) {
         RotaryOptions options;
         options.rule = extension_rule(spec);
         options.base = number_option(spec, "rope", "base", options.base);
         options.fraction = number_option(spec, "rope", "fraction", options.fraction);
         if (auto it = spec.options.find("layout"); it != spec.options.end())
           options.layout = rotary_layout_from(it->second);
         ag::check(spec.model.heads > 0 && spec.model.width % spec.model.heads == 0, "rope",
                   "width ", spec.model.width, " is not divisible into ", spec.model.heads,
                   " heads");
         return std::make_shared<RotaryEncoding>(spec.model.width / spec.model.heads, options);
       }});
}

void extend_rope(const std::vector<std::string>& option_names, RopeRuleReader read,
                 const std::string& owner) {
  register_ch05_encodings();
  std::vector<RopeExtension>& extensions = rope_extensions();
  const auto same = std::find_if(extensions.begin(), extensions.end(), [&](const RopeExtension& e) {
    return e.option_names == option_names;
  });
  if (same != extensions.end())
    *same = {option_names, std::move(read), owner};  // the same chapter again: no new options
  else
    extensions.push_back({option_names, std::move(read), owner});
  add_encoding_options("rope", option_names);
}

}  // namespace pe
