// A model's config.json read into its kinds of layers (hf_config.hpp). How each field is read
// follows transformers (configuration_utils.py's RotaryEmbeddingConfigMixin, and the config
// classes of gemma3, gemma4, llama4, qwen2, phi3 and deepseek_v3):
//
//  - rope_scaling (transformers v4) and rope_parameters (v5) are one field under two names. It
//    is one dict for the whole model, or a dict per layer type (Gemma 3 and 4 in v5), which is
//    told by its values: a dict of dicts is per layer type. Its "rope_type" (or the older
//    "type"; Phi-3's first configs wrote "su" for longrope) is "default" when absent.
//  - rope_theta and partial_rotary_factor may stand at the top or inside the dict; the
//    original context (original_max_position_embeddings) at the top (Phi-3) or inside, and
//    yarn, longrope and llama3 fall back to max_position_embeddings without it.
//  - head_dim is DeepSeek's qk_rope_head_dim (the rotary part of its heads) when given, else
//    head_dim, else hidden_size / num_attention_heads; Gemma 4's non-sliding layers use
//    global_head_dim. A head_dim that differs from hidden_size / num_attention_heads is not a
//    contradiction: Gemma's heads are narrower than that, and head_dim wins.
//  - The layers' kinds come from layer_types (one per layer), else Gemma's
//    sliding_window_pattern (layer i slides unless (i + 1) % pattern == 0), else Qwen2's
//    use_sliding_window with max_window_layers, else a sliding_window alone (Mistral) slides
//    every layer. Gemma 3's sliding layers turn at rope_local_base_freq with no scaling: the
//    rope_scaling dict is its full-attention layers'. "linear_attention" layers (Qwen3-Next's
//    recurrent layers) do not rotate.
//  - Llama 4's no_rope_layers holds 1 for a layer that rotates and 0 for a NoPE layer, else
//    no_rope_layer_interval makes every interval-th layer NoPE ((i + 1) % interval == 0). Its
//    attention_chunk_size chunks the rotating layers (the "chunked_attention" ones when
//    layer_types says so); attn_temperature_tuning (true, or a non-zero number: Meta's config
//    writes 4) gives the NoPE layers the temperature 1 + attn_scale log1p(floor((p + 1) /
//    floor_scale)).
//  - A JSON null is an absent field. For the model types whose published config.json leaves
//    them out (gemma2, gemma3_text, gemma4_text, llama4_text), the defaults of their config
//    classes fill the fields this reader needs; a field the file gives is never replaced.
//
// Refused, each in one line naming the field: a field of the wrong JSON type (a number where
// a string is expected, ...); an unknown rope_type; a field the rope type needs
// (check_hf_rope's list); layer_types or no_rope_layers not one entry per layer; a per-type
// dict keyed by a layer type that no layer has, or missing for one that rotates; both
// rope_scaling and rope_parameters; the same quantity given twice with two values (rope_theta,
// partial_rotary_factor, the original context, rope_type and type, sliding_window_pattern or
// no_rope_layer_interval against the per-layer list); hidden_size not a multiple of
// num_attention_heads when head_dim comes from them; a partial_rotary_factor that turns an
// odd number of coordinates; longrope factor lists not one entry per plane.
#include "chapters/11-todays-models/hf_config.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <utility>

#include "ag/error.hpp"
#include "ag/files.hpp"

namespace pe {

namespace {

using nlohmann::json;

// Real config.json files are a few kilobytes (Phi-3's factor lists included).
constexpr std::uint64_t kMaxConfigBytes = std::uint64_t(16) << 20;
// More layers than any model has; a bound so that a hostile file cannot size memory.
constexpr std::int64_t kMostLayers = 65536;

// A number as a message shows it: six significant digits, no trailing zeros ("500000").
std::string number_text(double x) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%g", x);
  return buffer;
}

// A JSON value as a message shows it: short.
std::string shown(const json& value) {
  std::string text = value.dump();
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return text;
}

// One JSON object of the config and the path that names its fields in messages: "" for the
// top, "text_config." inside a multimodal config, "rope_scaling." inside the dict.
class Fields {
 public:
  Fields(const json& object, std::string path, std::string source)
      : object_(object), path_(std::move(path)), source_(std::move(source)) {}

  const std::string& path() const { return path_; }
  const std::string& source() const { return source_; }
  std::string name(const std::string& key) const { return path_ + key; }

  [[noreturn]] void refuse(const std::string& message) const {
    throw ag::Error(source_ + ": " + message);
  }

  // Present and not null.
  bool has(const std::string& key) const {
    const auto it = object_.find(key);
    return it != object_.end() && !it->is_null();
  }
  const json& at(const std::string& key) const { return object_.at(key); }

  std::optional<double> number(const std::string& key) const {
    if (!has(key)) return std::nullopt;
    const json& v = at(key);
    if (!v.is_number()) refuse(name(key) + " must be a number, got " + shown(v));
    return v.get<double>();
  }

  std::optional<std::int64_t> whole(const std::string& key, std::int64_t low,
                                    std::int64_t high = INT64_MAX) const {
    if (!has(key)) return std::nullopt;
    const json& v = at(key);
    const double x = v.is_number() ? v.get<double>() : NAN;
    if (!v.is_number() || x != std::floor(x) || x < double(low) || x > double(high))
      refuse(name(key) + " must be a whole number" +
             (high == INT64_MAX ? " >= " + std::to_string(low)
                                : " from " + std::to_string(low) + " to " + std::to_string(high)) +
             ", got " + shown(v));
    return v.is_number_integer() ? v.get<std::int64_t>() : std::int64_t(x);
  }

  std::optional<std::string> text(const std::string& key) const {
    if (!has(key)) return std::nullopt;
    const json& v = at(key);
    if (!v.is_string()) refuse(name(key) + " must be a string, got " + shown(v));
    return v.get<std::string>();
  }

  // true or false; a number counts as its truth (Llama 4's attn_temperature_tuning is 4).
  std::optional<bool> flag(const std::string& key) const {
    if (!has(key)) return std::nullopt;
    const json& v = at(key);
    if (v.is_boolean()) return v.get<bool>();
    if (v.is_number()) return v.get<double>() != 0;
    refuse(name(key) + " must be true or false, got " + shown(v));
  }

  std::optional<std::vector<double>> numbers(const std::string& key) const {
    if (!has(key)) return std::nullopt;
    const json& v = at(key);
    if (!v.is_array()) refuse(name(key) + " must be a list of numbers, got " + shown(v));
    std::vector<double> out;
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (!v[i].is_number())
        refuse(name(key) + "[" + std::to_string(i) + "] must be a number, got " + shown(v[i]));
      out.push_back(v[i].get<double>());
    }
    return out;
  }

  // The object under key, null when absent; anything else is refused.
  const json* object(const std::string& key) const {
    if (!has(key)) return nullptr;
    const json& v = at(key);
    if (!v.is_object()) refuse(name(key) + " must be an object, got " + shown(v));
    return &v;
  }

 private:
  const json& object_;
  std::string path_;
  std::string source_;
};

// The defaults of transformers' config classes for the fields read here, for the model types
// whose published config.json leaves them out (google/gemma-3-4b-it's text_config gives six
// fields). Added only where the file has no such key (a key set to null stays null).
void add_defaults(json& c, const std::string& model_type) {
  json d = json::object();
  const bool listed = c.contains("layer_types") && !c["layer_types"].is_null();
  if (model_type == "gemma2") {
    d = {{"rope_theta", 10000.0}, {"head_dim", 256},         {"num_attention_heads", 8},
         {"hidden_size", 2304},   {"num_hidden_layers", 26}, {"max_position_embeddings", 8192},
         {"sliding_window", 4096}};
    if (!listed) d["sliding_window_pattern"] = 2;  // Gemma 2 alternates, sliding first
  } else if (model_type == "gemma3_text" || model_type == "gemma3") {
    d = {{"rope_theta", 1000000.0},
         {"rope_local_base_freq", 10000.0},
         {"head_dim", 256},
         {"num_attention_heads", 8},
         {"hidden_size", 2304},
         {"num_hidden_layers", 26},
         {"max_position_embeddings", 131072},
         {"sliding_window", 4096}};
    if (!listed) d["sliding_window_pattern"] = 6;
  } else if (model_type == "gemma4_text" || model_type == "gemma4") {
    d = {{"head_dim", 256},
         {"global_head_dim", 512},
         {"num_attention_heads", 8},
         {"hidden_size", 2304},
         {"num_hidden_layers", 30},
         {"max_position_embeddings", 131072},
         {"sliding_window", 512},
         {"rope_parameters",
          {{"sliding_attention", {{"rope_type", "default"}, {"rope_theta", 10000.0}}},
           {"full_attention",
            {{"rope_type", "proportional"},
             {"partial_rotary_factor", 0.25},
             {"rope_theta", 1000000.0}}}}}};
  } else if (model_type == "llama4_text" || model_type == "llama4") {
    d = {{"rope_theta", 500000.0},       {"head_dim", 128},
         {"num_attention_heads", 40},    {"hidden_size", 5120},
         {"num_hidden_layers", 48},      {"max_position_embeddings", 131072},
         {"attention_chunk_size", 8192}, {"attn_temperature_tuning", true},
         {"floor_scale", 8192},          {"attn_scale", 0.1}};
    const bool nope_listed = c.contains("no_rope_layers") && c["no_rope_layers"].is_array() &&
                             !c["no_rope_layers"].empty();
    if (!nope_listed) d["no_rope_layer_interval"] = 4;
  }
  for (const auto& [key, value] : d.items())
    if (!c.contains(key)) c[key] = value;
  // Gemma 4 without layer_types: five sliding layers to one full, and the last layer full.
  if ((model_type == "gemma4_text" || model_type == "gemma4") && !listed &&
      c["num_hidden_layers"].is_number_integer()) {
    const std::int64_t n = std::clamp<std::int64_t>(c["num_hidden_layers"], 0, kMostLayers);
    json types = json::array();
    for (std::int64_t i = 0; i < n; ++i)
      types.push_back((i + 1) % 6 != 0 && i != n - 1 ? "sliding_attention" : "full_attention");
    c["layer_types"] = types;
  }
}

// The rope dict that applies to one layer type, where it stands in the file.
struct RopeDict {
  const json* dict = nullptr;  // null: the config has none for this type
  std::string path;            // "rope_scaling.", "rope_parameters.full_attention."
  bool per_type = false;       // one of the dicts of a per-layer-type rope_parameters
};

HfRopeType rope_type_of(const Fields& d) {
  auto type = d.text("rope_type");
  const auto old = d.text("type");
  if (type && old && *type != *old)
    d.refuse(d.name("rope_type") + " '" + *type + "' contradicts " + d.name("type") + " '" + *old +
             "'");
  std::string name = type ? *type : old ? *old : "default";
  if (name == "su") name = "longrope";  // Phi-3's first configs (transformers renamed it)
  try {
    return hf_rope_type_from(name);
  } catch (const ag::Error& e) {
    d.refuse(d.name(type ? "rope_type" : "type") + ": " + e.what());
  }
}

// Everything the model's config says about its layers, before grouping.
struct Layers {
  std::vector<std::string> type;  // layer_types, or "" for every layer when there are none
  std::vector<bool> rotary;
  std::vector<bool> nope;  // a NoPE layer of Llama 4's kind (no_rope_layers)
  std::vector<std::int64_t> window, chunk;
  bool nope_given = false;
};

Layers read_layers(const Fields& f, std::int64_t n) {
  Layers l;
  l.type.assign(n, "");
  l.rotary.assign(n, true);
  l.nope.assign(n, false);
  l.window.assign(n, 0);
  l.chunk.assign(n, 0);

  bool typed = false;
  if (f.has("layer_types")) {
    const json& v = f.at("layer_types");
    if (!v.is_array()) f.refuse("layer_types must be a list of strings, got " + shown(v));
    if (std::int64_t(v.size()) != n)
      f.refuse(f.name("layer_types") + " has " + std::to_string(v.size()) +
               " entries, expected one per layer: " + f.name("num_hidden_layers") + " is " +
               std::to_string(n));
    for (std::int64_t i = 0; i < n; ++i) {
      if (!v[i].is_string())
        f.refuse(f.name("layer_types") + "[" + std::to_string(i) + "] must be a string, got " +
                 shown(v[i]));
      l.type[i] = v[i].get<std::string>();
    }
    typed = true;
  }
  const std::string pattern_key =
      f.has("sliding_window_pattern") ? "sliding_window_pattern" : "_sliding_window_pattern";
  if (const auto pattern = f.whole(pattern_key, 1)) {
    for (std::int64_t i = 0; i < n; ++i) {
      const std::string expected = (i + 1) % *pattern ? "sliding_attention" : "full_attention";
      if (typed && l.type[i] != expected)
        f.refuse(f.name(pattern_key) + " " + std::to_string(*pattern) + " contradicts " +
                 f.name("layer_types") + ": layer " + std::to_string(i) + " is " + l.type[i] +
                 ", the pattern makes it " + expected);
      l.type[i] = expected;
    }
    typed = true;
  }
  const auto use_sliding = f.flag("use_sliding_window");
  const auto sliding_window = f.whole("sliding_window", 1);
  if (!typed && use_sliding.value_or(true) && sliding_window) {
    // Qwen2's: the layers from max_window_layers on slide; Mistral's: every layer slides.
    const std::int64_t first =
        use_sliding ? f.whole("max_window_layers", 0).value_or(0) : std::int64_t(0);
    for (std::int64_t i = 0; i < n; ++i)
      if (i >= first) l.window[i] = *sliding_window;
    if (use_sliding)
      for (std::int64_t i = 0; i < n; ++i)
        l.type[i] = i >= first ? "sliding_attention" : "full_attention";
  }
  for (std::int64_t i = 0; i < n; ++i) {
    if (l.type[i] != "sliding_attention") continue;
    if (use_sliding == false)
      f.refuse(f.name("use_sliding_window") + " is false, but layer " + std::to_string(i) +
               " is sliding_attention");
    if (!sliding_window)
      f.refuse(f.name("sliding_window") + " is missing (layer " + std::to_string(i) +
               " is sliding_attention)");
    l.window[i] = *sliding_window;
  }
  for (std::int64_t i = 0; i < n; ++i)
    if (l.type[i] == "linear_attention") l.rotary[i] = false;

  // Llama 4's NoPE layers: a list with 1 for a rotating layer, else every interval-th layer.
  const auto interval = f.whole("no_rope_layer_interval", 1);
  const bool listed = f.has("no_rope_layers") &&
                      !(f.at("no_rope_layers").is_array() && f.at("no_rope_layers").empty());
  if (listed) {
    const json& v = f.at("no_rope_layers");
    if (!v.is_array()) f.refuse(f.name("no_rope_layers") + " must be a list, got " + shown(v));
    if (std::int64_t(v.size()) != n)
      f.refuse(f.name("no_rope_layers") + " has " + std::to_string(v.size()) +
               " entries, expected one per layer: " + f.name("num_hidden_layers") + " is " +
               std::to_string(n));
    for (std::int64_t i = 0; i < n; ++i) {
      const json& e = v[i];
      const bool one = e == 1 || e == true, zero = e == 0 || e == false;
      if (!one && !zero)
        f.refuse(f.name("no_rope_layers") + "[" + std::to_string(i) +
                 "] must be 1 (the layer rotates) or 0 (a NoPE layer), got " + shown(e));
      if (interval && one != bool((i + 1) % *interval))
        f.refuse(f.name("no_rope_layer_interval") + " " + std::to_string(*interval) +
                 " contradicts " + f.name("no_rope_layers") + ": layer " + std::to_string(i) +
                 (one ? " rotates" : " is NoPE"));
      l.nope[i] = zero;
    }
    l.nope_given = true;
  } else if (interval) {
    for (std::int64_t i = 0; i < n; ++i) l.nope[i] = (i + 1) % *interval == 0;
    l.nope_given = true;
  }
  for (std::int64_t i = 0; i < n; ++i)
    if (l.nope[i]) l.rotary[i] = false;

  if (const auto chunk = f.whole("attention_chunk_size", 1)) {
    const bool any_chunked =
        std::find(l.type.begin(), l.type.end(), "chunked_attention") != l.type.end();
    for (std::int64_t i = 0; i < n; ++i) {
      const bool chunked =
          any_chunked ? l.type[i] == "chunked_attention" : !l.nope_given || !l.nope[i];
      if (chunked) l.chunk[i] = *chunk;
    }
  }
  return l;
}

// One rotating layer type's parameters, from its dict and the top-level fields.
HfRopeParameters read_rope(const Fields& f, const RopeDict& where, const std::string& layer_type,
                           std::int64_t head_dim) {
  static const json kEmpty = json::object();
  const Fields d(where.dict ? *where.dict : kEmpty, where.path, f.source());
  HfRopeParameters p;
  // Gemma 3's local layers turn at rope_local_base_freq, unscaled, unless a dict of their own
  // says otherwise: the model's one rope_scaling is its global layers'.
  const auto local_base = f.number("rope_local_base_freq");
  const bool local = layer_type == "sliding_attention" && local_base.has_value();
  if (local && !where.per_type) {
    p.type = HfRopeType::standard;
    p.rope_theta = *local_base;
    p.head_dim = head_dim;
    p.max_position_embeddings = f.whole("max_position_embeddings", 1).value_or(0);
    try {
      check_hf_rope(p);
    } catch (const ag::Error& e) {
      f.refuse(f.name("rope_local_base_freq") + ": " + e.what());
    }
    return p;
  }
  p.type = rope_type_of(d);
  const std::string type_name = hf_rope_type_name(p.type);

  // rope_theta: the dict's, else (one dict for the model) the top's, which must agree with it.
  const auto top_theta = f.number("rope_theta");
  const auto theta = d.number("rope_theta");
  if (theta && top_theta && !where.per_type && *theta != *top_theta)
    f.refuse(d.name("rope_theta") + " " + number_text(*theta) + " contradicts " +
             f.name("rope_theta") + " " + number_text(*top_theta));
  p.rope_theta = theta ? *theta : local ? *local_base : top_theta.value_or(10000.0);

  p.head_dim = head_dim;
  const auto top_partial = f.number("partial_rotary_factor");
  const auto partial = d.number("partial_rotary_factor");
  if (partial && top_partial && *partial != *top_partial)
    f.refuse(f.name("partial_rotary_factor") + " " + number_text(*top_partial) + " contradicts " +
             d.name("partial_rotary_factor") + " " + number_text(*partial));
  p.partial_rotary_factor = top_partial ? *top_partial : partial.value_or(1.0);
  const std::string partial_name =
      top_partial ? f.name("partial_rotary_factor") : d.name("partial_rotary_factor");
  // Every type but proportional turns int(head_dim * factor) coordinates, in pairs.
  std::int64_t dim = head_dim;
  if (p.partial_rotary_factor > 0 && p.partial_rotary_factor <= 1 &&
      p.type != HfRopeType::proportional) {
    dim = std::int64_t(double(head_dim) * p.partial_rotary_factor);
    if (dim % 2 != 0 || dim < 2)
      f.refuse(partial_name + " " + number_text(p.partial_rotary_factor) + " turns int(" +
               std::to_string(head_dim) + " * " + number_text(p.partial_rotary_factor) +
               ") = " + std::to_string(dim) +
               " coordinates of each head; RoPE turns pairs, so an even number >= 2");
  }

  p.max_position_embeddings = f.whole("max_position_embeddings", 1).value_or(0);
  const auto top_original = f.whole("original_max_position_embeddings", 1);
  const auto original = d.whole("original_max_position_embeddings", 1);
  if (top_original && original && *top_original != *original)
    f.refuse(f.name("original_max_position_embeddings") + " " + std::to_string(*top_original) +
             " contradicts " + d.name("original_max_position_embeddings") + " " +
             std::to_string(*original));
  if (top_original || original)
    p.original_max_position_embeddings = top_original ? *top_original : *original;
  const bool needs_original =
      p.type == HfRopeType::yarn || p.type == HfRopeType::longrope || p.type == HfRopeType::llama3;
  if (needs_original && !p.original_max_position_embeddings) {
    if (!p.max_position_embeddings)
      f.refuse(d.name("original_max_position_embeddings") + " is missing (" + type_name +
               " needs it, or " + f.name("max_position_embeddings") + ")");
    p.original_max_position_embeddings = p.max_position_embeddings;
  }
  if (p.type == HfRopeType::dynamic && !p.max_position_embeddings)
    f.refuse(f.name("max_position_embeddings") + " is missing (dynamic needs it)");

  const auto need = [&](const std::string& key, const auto& value) {
    if (!value) f.refuse(d.name(key) + " is missing (" + type_name + " needs it)");
  };
  p.factor = d.number("factor");
  if (p.type == HfRopeType::linear || p.type == HfRopeType::dynamic || p.type == HfRopeType::yarn ||
      p.type == HfRopeType::llama3)
    need("factor", p.factor);
  p.attention_factor = d.number("attention_factor");
  p.beta_fast = d.number("beta_fast");
  p.beta_slow = d.number("beta_slow");
  p.mscale = d.number("mscale");
  p.mscale_all_dim = d.number("mscale_all_dim");
  if (d.has("truncate")) {
    if (!d.at("truncate").is_boolean())
      f.refuse(d.name("truncate") + " must be true or false, got " + shown(d.at("truncate")));
    p.truncate = d.at("truncate").get<bool>();
  }
  p.low_freq_factor = d.number("low_freq_factor");
  p.high_freq_factor = d.number("high_freq_factor");
  if (p.type == HfRopeType::llama3) {
    need("low_freq_factor", p.low_freq_factor);
    need("high_freq_factor", p.high_freq_factor);
  }
  if (p.type == HfRopeType::longrope) {
    for (const char* key : {"short_factor", "long_factor"}) {
      const auto list = d.numbers(key);
      need(key, list);
      if (std::int64_t(list->size()) != dim / 2)
        f.refuse(d.name(key) + " has " + std::to_string(list->size()) +
                 " entries, expected one per plane: " + std::to_string(dim / 2) +
                 " (rotated width " + std::to_string(dim) + " / 2)");
      (std::string(key) == "short_factor" ? p.short_factor : p.long_factor) = *list;
    }
  }
  try {
    check_hf_rope(p);
  } catch (const ag::Error& e) {
    f.refuse((where.dict ? where.path.substr(0, where.path.size() - 1) + ": " : "") + e.what());
  }
  return p;
}

HfModelRope read_config(const json& config, const std::string& source) {
  if (!config.is_object())
    throw ag::Error(source + ": expected a JSON object (a model's config.json), got " +
                    shown(config));
  const Fields top(config, "", source);
  const json* text = top.object("text_config");
  json c = text ? *text : config;
  const Fields inner(c, text ? "text_config." : "", source);
  HfModelRope model;
  model.model_type = inner.text("model_type").value_or(top.text("model_type").value_or(""));
  add_defaults(c, model.model_type);
  const Fields f(c, inner.path(), source);

  const auto n = f.whole("num_hidden_layers", 1, kMostLayers);
  if (!n) f.refuse(f.name("num_hidden_layers") + " is missing");
  model.layers = *n;

  // head_dim: DeepSeek's rotary part, else head_dim, else hidden_size / num_attention_heads.
  std::int64_t head_dim = 0;
  if (const auto rope_part = f.whole("qk_rope_head_dim", 2)) {
    head_dim = *rope_part;
  } else if (const auto given = f.whole("head_dim", 2)) {
    head_dim = *given;
  } else {
    const auto hidden = f.whole("hidden_size", 1);
    const auto heads = f.whole("num_attention_heads", 1);
    if (!hidden || !heads)
      f.refuse(f.name(hidden ? "num_attention_heads" : "hidden_size") +
               " is missing (head_dim is hidden_size / num_attention_heads without head_dim)");
    if (*hidden % *heads != 0)
      f.refuse(f.name("hidden_size") + " " + std::to_string(*hidden) + " is not a multiple of " +
               f.name("num_attention_heads") + " " + std::to_string(*heads) +
               " (and no head_dim is given)");
    head_dim = *hidden / *heads;
  }
  const auto global_head_dim = f.whole("global_head_dim", 2);

  const Layers l = read_layers(f, *n);

  // The rope dict: rope_scaling (v4) or rope_parameters (v5), one for all or one per type.
  const json* scaling = f.object("rope_scaling");
  const json* parameters = f.object("rope_parameters");
  if (scaling && parameters)
    f.refuse(f.name("rope_scaling") + " and " + f.name("rope_parameters") +
             " are both given (transformers v4's and v5's names for one field): keep one");
  const json* dict = scaling ? scaling : parameters;
  const std::string dict_name = f.name(scaling ? "rope_scaling" : "rope_parameters");
  bool per_type = false;
  std::set<std::string> types(l.type.begin(), l.type.end());
  if (dict)
    for (const auto& [key, value] : dict->items()) per_type = per_type || value.is_object();
  if (per_type) {
    for (const auto& [key, value] : dict->items()) {
      if (value.is_null()) continue;
      if (!value.is_object())
        f.refuse(dict_name + "." + key + " must be an object (" + dict_name +
                 " holds one dict per layer type), got " + shown(value));
      if (!types.count(key) || key.empty()) {
        std::string known;
        for (const auto& t : types)
          if (!t.empty()) known += (known.empty() ? "" : ", ") + t;
        f.refuse(dict_name + "." + key + ": no layer has type " + key +
                 (known.empty() ? " (the config has no layer_types)"
                                : " (layer_types has " + known + ")"));
      }
    }
  }

  // Group the layers by kind, in order of first layer.
  std::map<std::string, std::set<bool>> rotations;  // a layer type may hold NoPE layers too
  for (std::int64_t i = 0; i < *n; ++i) rotations[l.type[i]].insert(l.nope[i]);
  const auto kind_of = [&](std::int64_t i) {
    const std::string& t = l.type[i];
    if (!l.nope_given) return t.empty() ? std::string("all") : t;
    const std::string rope = l.nope[i] ? "nope" : "rope";
    if (t.empty()) return rope;
    return rotations[t].size() > 1 ? t + "/" + rope : t;
  };
  const auto temperature = f.flag("attn_temperature_tuning").value_or(false);
  std::map<std::string, std::size_t> index;
  for (std::int64_t i = 0; i < *n; ++i) {
    const std::string kind = kind_of(i);
    auto it = index.find(kind);
    if (it == index.end()) {
      HfLayerType t;
      t.name = kind;
      t.rotary = l.rotary[i];
      t.window = l.window[i];
      t.chunk = l.chunk[i];
      if (t.rotary) {
        RopeDict where;
        if (per_type) {
          const auto entry = dict->find(l.type[i]);
          if (entry == dict->end() || entry->is_null())
            f.refuse(dict_name + " has no entry for layer type " + l.type[i] + " (layer " +
                     std::to_string(i) + ")");
          where = {&*entry, dict_name + "." + l.type[i] + ".", true};
        } else {
          where = {dict, dict_name + ".", false};
        }
        const std::int64_t width =
            global_head_dim && l.type[i] != "sliding_attention" && !l.type[i].empty()
                ? *global_head_dim
                : head_dim;
        t.rope = read_rope(f, where, l.type[i], width);
      }
      if (l.nope[i] && temperature) {
        const auto floor_scale = f.number("floor_scale");
        const auto attn_scale = f.number("attn_scale");
        if (!floor_scale || *floor_scale <= 0)
          f.refuse(f.name("floor_scale") + (floor_scale ? " must be > 0" : " is missing") +
                   " (attn_temperature_tuning needs it)");
        if (!attn_scale)
          f.refuse(f.name("attn_scale") + " is missing (attn_temperature_tuning needs it)");
        t.temperature_floor = *floor_scale;
        t.temperature_scale = *attn_scale;
      }
      it = index.emplace(kind, model.types.size()).first;
      model.types.push_back(t);
    }
    HfLayerType& t = model.types[it->second];
    // One kind, one window and chunk: layer_types names them, so they cannot differ.
    t.layers.push_back(i);
  }
  return model;
}

}  // namespace

HfModelRope read_hf_config(const nlohmann::json& config) {
  return read_config(config, "config.json");
}

HfModelRope read_hf_config_text(const std::string& text, const std::string& source) {
  json config;
  try {
    config = json::parse(text);
  } catch (const json::parse_error& e) {
    // nlohmann's message: "[json.exception.parse_error.101] parse error at line 3, column 5:
    // syntax error ..."; the part after "parse error" says where and what.
    std::string what = e.what();
    const auto at = what.find("parse error");
    throw ag::Error(source +
                    ": not valid JSON: " + (at == std::string::npos ? what : what.substr(at)));
  }
  return read_config(config, source);
}

HfModelRope read_hf_config_file(const std::string& path) {
  return read_hf_config_text(ag::read_file(path, kMaxConfigBytes, "a model's config.json"), path);
}

}  // namespace pe
