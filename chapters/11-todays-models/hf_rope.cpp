#include "chapters/11-todays-models/hf_rope.hpp"

#include <algorithm>
#include <cmath>

#include "ag/error.hpp"
#include "chapters/05-rope/rope.hpp"
#include "chapters/08-length/rope_scaling.hpp"

namespace pe {

HfRopeType hf_rope_type_from(const std::string& name) {
  for (HfRopeType type :
       {HfRopeType::standard, HfRopeType::linear, HfRopeType::dynamic, HfRopeType::yarn,
        HfRopeType::longrope, HfRopeType::llama3, HfRopeType::proportional})
    if (name == hf_rope_type_name(type)) return type;
  throw ag::Error("rope: unknown rope_type '" + name +
                  "' (expected default, linear, dynamic, yarn, longrope, llama3 or proportional)");
}

std::string hf_rope_type_name(HfRopeType type) {
  switch (type) {
    case HfRopeType::standard:
      return "default";
    case HfRopeType::linear:
      return "linear";
    case HfRopeType::dynamic:
      return "dynamic";
    case HfRopeType::yarn:
      return "yarn";
    case HfRopeType::longrope:
      return "longrope";
    case HfRopeType::llama3:
      return "llama3";
    case HfRopeType::proportional:
      return "proportional";
  }
  return "default";
}

namespace {

// dim = int(head_dim * partial_rotary_factor): Python's int() truncates the product as it
// comes out of the multiplication (chapter 5's fraction adds a margin of 1e-9 first; they
// differ only where the product lands a hair below a whole number). Proportional turns planes
// over the whole head.
std::int64_t rotated_dim(const HfRopeParameters& p) {
  if (p.type == HfRopeType::proportional) return p.head_dim;
  return static_cast<std::int64_t>(double(p.head_dim) * p.partial_rotary_factor);
}

// L0: original_max_position_embeddings, or max_position_embeddings when the config has none,
// as transformers' standardize_rope_params fills it in for yarn, longrope and llama3.
std::int64_t original_length(const HfRopeParameters& p) {
  return p.original_max_position_embeddings.value_or(p.max_position_embeddings);
}

// s: factor, or for yarn and longrope without one, max_position_embeddings / L0 (DeepSeek-V3
// and Phi-3 give the two lengths instead).
double factor_of(const HfRopeParameters& p) {
  if (p.factor) return *p.factor;
  if (p.type == HfRopeType::yarn || p.type == HfRopeType::longrope)
    return double(p.max_position_embeddings) / double(original_length(p));
  return 1;  // proportional's default
}

bool is_finite_positive(double x) { return std::isfinite(x) && x > 0; }

}  // namespace

void check_hf_rope_fields(const HfRopeParameters& p) {
  const std::string type = hf_rope_type_name(p.type);
  const char* op = type.c_str();
  const HfRopeType t = p.type;
  const bool has_original_length =
      t == HfRopeType::yarn || t == HfRopeType::longrope || t == HfRopeType::llama3;
  ag::check(p.max_position_embeddings >= 0, op, "max_position_embeddings must not be negative, ",
            "got ", p.max_position_embeddings);
  if (has_original_length)
    ag::check(original_length(p) >= 1, op, "original_max_position_embeddings is missing (the ",
              "context the model was pretrained at; max_position_embeddings stands in for it ",
              "when given)");
  if (t == HfRopeType::dynamic)
    ag::check(p.max_position_embeddings >= 1, op, "max_position_embeddings is missing (the ",
              "length up to which dynamic keeps the default frequencies)");
  const bool needs_factor =
      t == HfRopeType::linear || t == HfRopeType::dynamic || t == HfRopeType::llama3 ||
      ((t == HfRopeType::yarn || t == HfRopeType::longrope) && p.max_position_embeddings == 0);
  ag::check(!needs_factor || p.factor, op, "factor is missing",
            t == HfRopeType::yarn || t == HfRopeType::longrope
                ? " (or max_position_embeddings, for max_position_embeddings / "
                  "original_max_position_embeddings)"
                : "");
  if (p.factor)
    ag::check(std::isfinite(*p.factor) && *p.factor >= 1, op, "factor must be at least 1, got ",
              *p.factor);
  else if (t == HfRopeType::yarn)
    ag::check(factor_of(p) >= 1, op, "factor = max_position_embeddings / ",
              "original_max_position_embeddings = ", p.max_position_embeddings, " / ",
              original_length(p), " must be at least 1");
  if (p.attention_factor)
    ag::check(is_finite_positive(*p.attention_factor), op, "attention_factor must be positive, ",
              "got ", *p.attention_factor);
  if (t == HfRopeType::yarn) {
    // transformers reads `beta_fast or 32`, `beta_slow or 1`: 0 stands for the default
    const double fast = p.beta_fast.value_or(0) != 0 ? *p.beta_fast : 32;
    const double slow = p.beta_slow.value_or(0) != 0 ? *p.beta_slow : 1;
    ag::check(is_finite_positive(slow), op, "beta_slow must be positive, got ", slow);
    ag::check(std::isfinite(fast) && fast > slow, op, "beta_fast (", fast,
              ") must exceed beta_slow (", slow, ")");
    for (const auto& [name, value] :
         {std::pair{"mscale", p.mscale}, std::pair{"mscale_all_dim", p.mscale_all_dim}})
      ag::check(!value || std::isfinite(*value), op, name, " must be a finite number, got ",
                value.value_or(0));
  }
  if (t == HfRopeType::llama3) {
    ag::check(p.low_freq_factor.has_value(), op, "low_freq_factor is missing");
    ag::check(p.high_freq_factor.has_value(), op, "high_freq_factor is missing");
    ag::check(is_finite_positive(*p.low_freq_factor), op, "low_freq_factor must be positive, got ",
              *p.low_freq_factor);
    ag::check(std::isfinite(*p.high_freq_factor) && *p.high_freq_factor > *p.low_freq_factor, op,
              "high_freq_factor (", *p.high_freq_factor, ") must exceed low_freq_factor (",
              *p.low_freq_factor, ")");
  }
  if (t == HfRopeType::longrope)
    for (const auto& [name, list] :
         {std::pair{"short_factor", &p.short_factor}, std::pair{"long_factor", &p.long_factor}}) {
      ag::check(!list->empty(), op, name, " is missing (one rescale per plane)");
      for (std::size_t i = 0; i < list->size(); ++i)
        ag::check(is_finite_positive((*list)[i]), op, name, "[", i, "] must be positive, got ",
                  (*list)[i]);
    }
}

void check_hf_rope(const HfRopeParameters& p) {
  const std::string type = hf_rope_type_name(p.type);
  const char* op = type.c_str();
  ag::check(p.head_dim >= 2, op, "head_dim must be at least 2, got ", p.head_dim);
  ag::check(std::isfinite(p.rope_theta) && p.rope_theta > 1, op,
            "rope_theta must be greater than 1, got ", p.rope_theta);
  ag::check(p.partial_rotary_factor > 0 && p.partial_rotary_factor <= 1, op,
            "partial_rotary_factor must lie in (0, 1], got ", p.partial_rotary_factor);
  const std::int64_t dim = rotated_dim(p);
  if (p.type == HfRopeType::proportional)
    ag::check(dim % 2 == 0, op, "head_dim must be even (its planes cover the whole head), got ",
              dim);
  else
    ag::check(dim >= 2 && dim % 2 == 0, op, "the rotated width dim = int(head_dim * ",
              "partial_rotary_factor) = int(", p.head_dim, " * ", p.partial_rotary_factor,
              ") = ", dim, " must be even and at least 2");
  if (p.type == HfRopeType::dynamic)
    ag::check(dim > 2, op, "the rotated width must exceed 2 (the base is raised to ",
              "dim / (dim - 2)), got ", dim);
  check_hf_rope_fields(p);
  if (p.type == HfRopeType::longrope)
    for (const auto& [name, list] :
         {std::pair{"short_factor", &p.short_factor}, std::pair{"long_factor", &p.long_factor}})
      ag::check(std::int64_t(list->size()) == dim / 2, op, name, " must have dim / 2 = ", dim / 2,
                " entries, one per plane, got ", list->size());
}

double hf_rope_attention_factor(const HfRopeParameters& p) {
  check_hf_rope_fields(p);
  if (p.attention_factor && (p.type == HfRopeType::yarn || p.type == HfRopeType::longrope))
    return *p.attention_factor;
  const double s = factor_of(p);
  if (p.type == HfRopeType::yarn) {
    // DeepSeek's ratio when both mscales are given and non-zero (transformers' `if mscale and
    // mscale_all_dim`); otherwise get_mscale(s), whatever mscale alone says
    if (p.mscale.value_or(0) != 0 && p.mscale_all_dim.value_or(0) != 0)
      return yarn_mscale(s, *p.mscale) / yarn_mscale(s, *p.mscale_all_dim);
    return yarn_mscale(s);
  }
  if (p.type == HfRopeType::longrope) return longrope_attention_factor(s, original_length(p));
  return 1;
}

double hf_rope_scale(const HfRopeParameters& p, std::int64_t seq_len) {
  check_hf_rope_fields(p);
  switch (p.type) {
    case HfRopeType::standard:
      return 1;
    case HfRopeType::dynamic: {  // chapter 8's dynamic NTK, L_train = max_position_embeddings
      RopeScalingOptions dynamic;
      dynamic.method = RopeScaling::dynamic;
      dynamic.scale = *p.factor;
      dynamic.train_length = p.max_position_embeddings;
      return rope_scale_at(dynamic, seq_len);
    }
    default:
      return factor_of(p);
  }
}

HfRopeFrequencies hf_rope_frequencies(const HfRopeParameters& p, std::int64_t seq_len) {
  check_hf_rope(p);
  ag::check(seq_len >= 0, hf_rope_type_name(p.type).c_str(), "seq_len must not be negative, got ",
            seq_len);
  const std::int64_t dim = rotated_dim(p);
  const double base = p.rope_theta;
  HfRopeFrequencies out;
  out.rotated_width = dim;
  out.attention_factor = hf_rope_attention_factor(p);
  // linear, dynamic and yarn are chapter 8's rules under the names a config gives: the scale
  // is the factor, L_train is max_position_embeddings (dynamic) or L0 (yarn), YaRN's alpha
  // and beta are beta_slow and beta_fast
  RopeScalingOptions scaling;
  scaling.scale = factor_of(p);
  switch (p.type) {
    case HfRopeType::standard:
      out.inv_freq = rope_frequencies(dim, base);
      return out;
    case HfRopeType::linear:
      scaling.method = RopeScaling::linear;
      break;
    case HfRopeType::dynamic:
      // seq_len = max(seq_len, max_position_embeddings), None counting as the latter
      scaling.method = RopeScaling::dynamic;
      scaling.train_length = p.max_position_embeddings;
      break;
    case HfRopeType::yarn:
      scaling.method = RopeScaling::yarn;
      scaling.train_length = original_length(p);
      scaling.beta = p.beta_fast.value_or(0) != 0 ? *p.beta_fast : 32;
      scaling.alpha = p.beta_slow.value_or(0) != 0 ? *p.beta_slow : 1;
      scaling.truncate = p.truncate;
      break;
    case HfRopeType::longrope: {
      // short_factor up to L0 (and for None), long_factor past it: 1 / (ext_i base^(2i/dim))
      const std::vector<double>& ext =
          seq_len > original_length(p) ? p.long_factor : p.short_factor;
      out.inv_freq = rope_frequencies(dim, base);
      for (std::size_t i = 0; i < ext.size(); ++i) out.inv_freq[i] /= ext[i];
      return out;
    }
    case HfRopeType::llama3:
      out.inv_freq = llama3_frequencies(rope_frequencies(dim, base), *p.factor, *p.low_freq_factor,
                                        *p.high_freq_factor, double(original_length(p)));
      return out;
    case HfRopeType::proportional:
      out.inv_freq = proportional_frequencies(p.head_dim, base, p.partial_rotary_factor);
      for (double& theta : out.inv_freq) theta /= factor_of(p);  // inv_freq /= factor
      return out;
  }
  out.inv_freq = scaled_rope_frequencies(dim, base, scaling, seq_len);
  return out;
}

// [llama3-frequencies]
std::vector<double> llama3_frequencies(const std::vector<double>& theta, double factor,
                                       double low_freq_factor, double high_freq_factor,
                                       double original_length) {
  ag::check(std::isfinite(factor) && factor >= 1, "llama3", "factor must be at least 1, got ",
            factor);
  ag::check(is_finite_positive(low_freq_factor), "llama3", "low_freq_factor must be positive, got ",
            low_freq_factor);
  ag::check(std::isfinite(high_freq_factor) && high_freq_factor > low_freq_factor, "llama3",
            "high_freq_factor (", high_freq_factor, ") must exceed low_freq_factor (",
            low_freq_factor, ")");
  ag::check(is_finite_positive(original_length), "llama3",
            "original_max_position_embeddings must be positive, got ", original_length);
  // TASK 11.1 begin: Llama 3.1's three bands
  const double low_freq_wavelen = original_length / low_freq_factor;    // longer: divided
  const double high_freq_wavelen = original_length / high_freq_factor;  // shorter: kept
  std::vector<double> out(theta.size());
  for (std::size_t i = 0; i < theta.size(); ++i) {
    const double wavelen = 2 * M_PI / theta[i];  // lambda_i: positions per turn
    // transformers' comparisons exactly: a wavelength equal to an end is in the middle band
    if (wavelen < high_freq_wavelen) {
      out[i] = theta[i];
    } else if (wavelen > low_freq_wavelen) {
      out[i] = theta[i] / factor;
    } else {  // g = 0 at lambda = L0 / low_freq_factor, 1 at L0 / high_freq_factor
      const double g =
          (original_length / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor);
      out[i] = (1 - g) * theta[i] / factor + g * theta[i];
    }
  }
  return out;
  // TASK 11.1 end
}
// [llama3-frequencies]

// [proportional-frequencies]
std::vector<double> proportional_frequencies(std::int64_t head_dim, double base, double p) {
  ag::check(head_dim >= 2 && head_dim % 2 == 0, "proportional",
            "head_dim must be even and at least 2, got ", head_dim);
  ag::check(std::isfinite(base) && base > 1, "proportional",
            "rope_theta must be greater than 1, got ", base);
  ag::check(p > 0 && p <= 1, "proportional", "partial_rotary_factor must lie in (0, 1], got ", p);
  // TASK 11.2 begin: p-RoPE's turning and still planes
  // k = int(p * head_dim // 2): Python floors the float p * head_dim halved
  const auto k = static_cast<std::int64_t>(std::floor(p * double(head_dim) / 2));
  // base^(-2i / head_dim): exponents over the whole head, whatever k is
  const std::vector<double> turning = rope_frequencies(head_dim, base);
  std::vector<double> theta(static_cast<std::size_t>(head_dim / 2), 0.0);  // all still...
  std::copy_n(turning.begin(), k, theta.begin());                          // ...but the first k
  return theta;
  // TASK 11.2 end
}
// [proportional-frequencies]

double longrope_attention_factor(double factor, std::int64_t original_length) {
  ag::check(original_length >= 2, "longrope",
            "original_max_position_embeddings must be at least 2 (its logarithm divides), got ",
            original_length);
  if (factor <= 1) return 1;
  return std::sqrt(1 + std::log(factor) / std::log(double(original_length)));
}

double yarn_mscale(double factor, double mscale) {
  if (factor <= 1) return 1;
  return 0.1 * mscale * std::log(factor) + 1;
}

}  // namespace pe
