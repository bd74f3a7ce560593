// A model's kinds of layers explained (hf_config.hpp): each plane's frequency in force beside
// its default one, its band decided from the two numbers, and the short table that
// `pe inspect rope --hf-config` prints. The reading of config.json is hf_config.cpp's.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "ag/error.hpp"
#include "chapters/11-todays-models/hf_config.hpp"

namespace pe {

namespace {

using nlohmann::json;

constexpr double kPi = 3.14159265358979323846;
// hf_band's relative tolerance: the frequencies are computed in double from the same
// formulas, so a kept or fully interpolated plane matches to rounding (1e-16).
constexpr double kBandTolerance = 1e-9;

std::string number_text(double x, int digits = 6) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.*g", digits, x);
  return buffer;
}

// Wavelengths and divisors in the table: three digits are what a reader compares.
std::string short_text(double x) { return number_text(x, 3); }

// "0-2, 4-6, ..." with at most `most` runs shown.
std::string layer_runs(const std::vector<std::int64_t>& layers, std::size_t most = 6) {
  std::vector<std::pair<std::int64_t, std::int64_t>> runs;
  for (const auto i : layers) {
    if (!runs.empty() && runs.back().second + 1 == i)
      runs.back().second = i;
    else
      runs.push_back({i, i});
  }
  const auto run_text = [](const std::pair<std::int64_t, std::int64_t>& r) {
    return r.first == r.second ? std::to_string(r.first)
                               : std::to_string(r.first) + "-" + std::to_string(r.second);
  };
  std::string out;
  for (std::size_t k = 0; k < runs.size(); ++k) {
    if (runs.size() > most && k == most - 1) {
      out += ", ..., " + run_text(runs.back());
      break;
    }
    out += (k ? ", " : "") + run_text(runs[k]);
  }
  return out;
}

// The original context L0 a layer type's wavelengths are compared with: the pretraining
// length when the config gives one, else max_position_embeddings (0: unknown).
std::int64_t original_context(const HfRopeParameters& p) {
  return p.original_max_position_embeddings.value_or(p.max_position_embeddings);
}

// The unscaled frequencies of the same heads: plain RoPE over the rotated width (over the
// whole head for proportional, whose turning planes keep those exponents).
std::vector<double> default_frequencies(const HfRopeParameters& p) {
  HfRopeParameters plain;
  plain.type = HfRopeType::standard;
  plain.rope_theta = p.rope_theta;
  plain.head_dim = p.head_dim;
  plain.partial_rotary_factor = p.type == HfRopeType::proportional ? 1.0 : p.partial_rotary_factor;
  plain.max_position_embeddings = p.max_position_embeddings;
  return hf_rope_frequencies(plain).inv_freq;
}

std::string text_format(const char* format, double a, double b = 0, double c = 0, double d = 0) {
  char buffer[256];
  std::snprintf(buffer, sizeof buffer, format, a, b, c, d);
  return buffer;
}

const std::vector<HfBand> kBands = {HfBand::kept, HfBand::blended, HfBand::interpolated,
                                    HfBand::rescaled, HfBand::zero};

}  // namespace

std::string hf_band_name(HfBand band) {
  switch (band) {
    case HfBand::kept:
      return "kept";
    case HfBand::interpolated:
      return "interpolated";
    case HfBand::blended:
      return "blended";
    case HfBand::rescaled:
      return "rescaled";
    case HfBand::zero:
      return "zero";
  }
  return "?";
}

HfBand hf_band(double inv_freq, double default_inv_freq, double factor) {
  if (inv_freq == 0) return HfBand::zero;
  const double r = default_inv_freq / inv_freq;  // the divisor of this plane's frequency
  const auto near = [](double x, double y) { return std::fabs(x - y) <= kBandTolerance * y; };
  if (near(r, 1)) return HfBand::kept;
  if (factor > 1 && near(r, factor)) return HfBand::interpolated;
  if (factor > 1 && r > 1 && r < factor) return HfBand::blended;
  return HfBand::rescaled;
}

nlohmann::json explain_hf_rope(const HfModelRope& model, std::int64_t seq_len) {
  ag::check(seq_len >= 0, "explain_hf_rope", "seq_len must be >= 0, got ", seq_len);
  json out = {{"model_type", model.model_type},
              {"layers", model.layers},
              {"seq_len", seq_len},
              {"layer_types", json::array()}};
  for (const HfLayerType& t : model.types) {
    json e = {{"name", t.name},
              {"layers", t.layers},
              {"count", t.layers.size()},
              {"rotary", t.rotary},
              {"window", t.window ? json(t.window) : json(nullptr)},
              {"chunk", t.chunk ? json(t.chunk) : json(nullptr)},
              {"temperature", nullptr}};
    if (t.temperature_floor > 0) {
      json temp = {{"floor_scale", t.temperature_floor},
                   {"attn_scale", t.temperature_scale},
                   {"formula", "q *= 1 + attn_scale * log1p(floor((position + 1) / floor_scale))"}};
      if (seq_len > 0)
        temp["at_last_position"] =
            1 + t.temperature_scale * std::log1p(std::floor(double(seq_len) / t.temperature_floor));
      e["temperature"] = temp;
    }
    if (t.rotary) {
      const HfRopeParameters& p = t.rope;
      const HfRopeFrequencies f = hf_rope_frequencies(p, seq_len);
      const std::vector<double> plain = default_frequencies(p);
      ag::check(plain.size() == f.inv_freq.size(), "explain_hf_rope", t.name, ": ",
                f.inv_freq.size(), " frequencies against ", plain.size(), " unscaled ones");
      // The bands' factor: the config's (1 without one: longrope's lists then read as
      // rescaled), and for dynamic the scale in force at this length.
      const double scale = hf_rope_scale(p, seq_len);
      const double factor = p.type == HfRopeType::dynamic ? scale : p.factor.value_or(1.0);
      const std::int64_t context = original_context(p);
      e["rope_type"] = hf_rope_type_name(p.type);
      e["head_dim"] = p.head_dim;
      e["rotated_width"] = f.rotated_width;
      e["rope_theta"] = p.rope_theta;
      e["partial_rotary_factor"] = p.partial_rotary_factor;
      e["factor"] = p.factor ? json(*p.factor) : json(nullptr);
      e["scale"] = scale;
      e["original_context"] = context ? json(context) : json(nullptr);
      // Where L0 comes from: the pretraining length, or only the longest position.
      e["context_from"] = p.original_max_position_embeddings ? "original_max_position_embeddings"
                          : context                          ? "max_position_embeddings"
                                                             : "";
      e["attention_factor"] = f.attention_factor;
      if (p.type == HfRopeType::longrope)
        e["longrope_factors"] = seq_len > p.original_max_position_embeddings.value_or(0)
                                    ? "long_factor"
                                    : "short_factor";
      if (p.mscale_all_dim && model.model_type.find("deepseek") != std::string::npos) {
        // modeling_deepseek_v3.py: the softmax scale is multiplied by get_mscale(s,
        // mscale_all_dim)^2.
        const double m = yarn_mscale(scale, *p.mscale_all_dim);
        e["softmax_scale_factor"] = m * m;
      }
      json counts = json::object();
      for (const HfBand b : kBands) counts[hf_band_name(b)] = 0;
      json planes = json::array();
      for (std::size_t i = 0; i < f.inv_freq.size(); ++i) {
        const double inv = f.inv_freq[i];
        const HfBand band = hf_band(inv, plain[i], factor);
        counts[hf_band_name(band)] = counts[hf_band_name(band)].get<int>() + 1;
        const json wavelength = inv > 0 ? json(2 * kPi / inv) : json(nullptr);
        planes.push_back(
            {{"i", i},
             {"inv_freq", inv},
             {"default_inv_freq", plain[i]},
             {"wavelength", wavelength},
             {"wavelength_over_context",
              inv > 0 && context ? json(2 * kPi / inv / double(context)) : json(nullptr)},
             {"band", hf_band_name(band)}});
      }
      e["bands"] = counts;
      e["planes"] = planes;
    }
    out["layer_types"].push_back(e);
  }
  return out;
}

std::string hf_rope_table(const HfModelRope& model, std::int64_t seq_len) {
  const json x = explain_hf_rope(model, seq_len);
  std::string out = (model.model_type.empty() ? "model" : "model_type " + model.model_type) + ", " +
                    std::to_string(model.layers) + " layers, " +
                    (seq_len ? "for a pass over " + std::to_string(seq_len) + " positions"
                             : std::string("at initialisation (no length given)")) +
                    "\n";
  for (const json& e : x["layer_types"]) {
    const auto layers = e["layers"].get<std::vector<std::int64_t>>();
    out += "\n" + e["name"].get<std::string>() + ": " + std::to_string(layers.size()) +
           (layers.size() == 1 ? " layer (" : " layers (") + layer_runs(layers) + ")\n";
    std::string attention;
    if (!e["window"].is_null())
      attention += "sliding window " + std::to_string(e["window"].get<std::int64_t>());
    if (!e["chunk"].is_null())
      attention += std::string(attention.empty() ? "" : ", ") + "chunks of " +
                   std::to_string(e["chunk"].get<std::int64_t>());
    if (!e["temperature"].is_null())
      attention += std::string(attention.empty() ? "" : ", ") +
                   text_format("temperature 1 + %g log1p(floor((p + 1) / %g))",
                               e["temperature"]["attn_scale"].get<double>(),
                               e["temperature"]["floor_scale"].get<double>());
    if (!attention.empty()) out += "  attention: " + attention + "\n";
    if (!e["rotary"].get<bool>()) {
      out += "  no rotation (NoPE)\n";
      continue;
    }
    const std::int64_t width = e["rotated_width"];
    const std::size_t planes = e["planes"].size();
    out += "  " + e["rope_type"].get<std::string>() + " rope: head_dim " +
           std::to_string(e["head_dim"].get<std::int64_t>()) + ", rotated width " +
           std::to_string(width) + " (" + std::to_string(planes) + " planes), theta " +
           number_text(e["rope_theta"].get<double>()) + "\n";
    std::string scale;
    if (!e["factor"].is_null()) scale += "factor " + number_text(e["factor"].get<double>()) + ", ";
    if (e["scale"].get<double>() != (e["factor"].is_null() ? 1.0 : e["factor"].get<double>()))
      scale += "scale in force " + number_text(e["scale"].get<double>()) + ", ";
    if (!e["original_context"].is_null())
      scale += (e["context_from"] == "max_position_embeddings" ? "context " : "original context ") +
               std::to_string(e["original_context"].get<std::int64_t>()) + ", ";
    if (e.contains("longrope_factors"))
      scale += e["longrope_factors"].get<std::string>() + " in force, ";
    scale += "attention factor " + number_text(e["attention_factor"].get<double>());
    if (e.contains("softmax_scale_factor"))
      scale += ", softmax scale x " + number_text(e["softmax_scale_factor"].get<double>());
    out += "  " + scale + "\n";
    for (const HfBand b : kBands) {
      std::vector<std::int64_t> in;
      double low = INFINITY, high = 0, divisor_low = INFINITY, divisor_high = 0;
      for (const json& plane : e["planes"]) {
        if (plane["band"] != hf_band_name(b)) continue;
        in.push_back(plane["i"]);
        if (!plane["wavelength"].is_null()) {
          low = std::min(low, plane["wavelength"].get<double>());
          high = std::max(high, plane["wavelength"].get<double>());
          const double divisor =
              plane["default_inv_freq"].get<double>() / plane["inv_freq"].get<double>();
          divisor_low = std::min(divisor_low, divisor);
          divisor_high = std::max(divisor_high, divisor);
        }
      }
      if (in.empty()) continue;
      std::string line = "  " + hf_band_name(b) + std::string(14 - hf_band_name(b).size(), ' ') +
                         std::to_string(in.size()) + (in.size() == 1 ? " plane  (" : " planes (") +
                         layer_runs(in, 4) + ")";
      if (b == HfBand::zero) {
        line += ": frequency 0, never turn";
      } else {
        line += ": wavelength " + short_text(low) + (low == high ? "" : " .. " + short_text(high));
        if (!e["original_context"].is_null()) {
          const double context = e["original_context"].get<double>();
          line += " (" + short_text(low / context) +
                  (low == high ? "" : " .. " + short_text(high / context)) + " x context)";
        }
        if (b != HfBand::kept)
          line += ", divided by " + short_text(divisor_low) +
                  (divisor_low == divisor_high ? "" : " .. " + short_text(divisor_high));
      }
      out += line + "\n";
    }
  }
  return out;
}

}  // namespace pe
