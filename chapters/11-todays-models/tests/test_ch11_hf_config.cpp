// A model's config.json read and explained (hf_config.hpp): each example of configs/ gives its
// model's kinds of layers and, plane by plane, the bands and attention factors that
// hf_rope_frequencies computes and that the formulas give by hand; malformed configs (each an
// example edited) are refused in one line naming the field.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ag/error.hpp"
#include "chapters/11-todays-models/hf_config.hpp"
#include "chapters/11-todays-models/hf_rope.hpp"

#ifndef PE_CH11_CONFIGS
#error "PE_CH11_CONFIGS must name chapters/11-todays-models/configs"
#endif

namespace pe {
namespace {

using nlohmann::json;

constexpr double kPi = 3.14159265358979323846;

const std::vector<std::string> kExamples = {"llama-3.1-8b",    "llama-3.2-1b", "llama-4-scout",
                                            "phi-3-mini-128k", "gemma-3-4b",   "gemma-4-31b",
                                            "deepseek-v3",     "qwen3-8b"};

std::string example_path(const std::string& name) {
  return std::string(PE_CH11_CONFIGS) + "/" + name + ".json";
}

json example(const std::string& name) {
  std::ifstream in(example_path(name));
  EXPECT_TRUE(in.good()) << example_path(name);
  return json::parse(in);
}

HfModelRope read_example(const std::string& name) {
  return read_hf_config_file(example_path(name));
}

const HfLayerType& type_named(const HfModelRope& model, const std::string& name) {
  for (const auto& t : model.types)
    if (t.name == name) return t;
  ADD_FAILURE() << "no layer type " << name;
  static const HfLayerType none;
  return none;
}

const json& explained(const json& x, const std::string& name) {
  for (const auto& e : x["layer_types"])
    if (e["name"] == name) return e;
  ADD_FAILURE() << "no layer type " << name << " in " << x.dump().substr(0, 200);
  static const json none = json::object();
  return none;
}

std::vector<std::int64_t> range(std::int64_t first, std::int64_t last, std::int64_t step = 1) {
  std::vector<std::int64_t> out;
  for (std::int64_t i = first; i <= last; i += step) out.push_back(i);
  return out;
}

std::string bands_of(const json& e) {
  std::string out;
  for (const auto& plane : e["planes"]) out += plane["band"].get<std::string>()[0];
  return out;
}

// The divisor of plane i: its unscaled frequency over its frequency.
double divisor(const json& e, std::size_t i) {
  return e["planes"][i]["default_inv_freq"].get<double>() /
         e["planes"][i]["inv_freq"].get<double>();
}

// Llama 3.1's bands by hand (Meta's apply_scaling): with wavelength 2 pi base^(2i/d), a plane
// under L0 / high_freq_factor = 2048 is kept, one over L0 / low_freq_factor = 8192 is divided
// by the factor, and the ones between are blended with g = (L0 / wavelength - 1) / (4 - 1).
TEST(Ch11HfConfig, Llama31KeepsPlanesUnder2048AndDividesPlanesOver8192) {
  const HfModelRope model = read_example("llama-3.1-8b");
  EXPECT_EQ(model.model_type, "llama");
  EXPECT_EQ(model.layers, 32);
  ASSERT_EQ(model.types.size(), 1u);
  const HfLayerType& all = type_named(model, "all");
  EXPECT_EQ(all.layers, range(0, 31));
  EXPECT_TRUE(all.rotary);
  EXPECT_EQ(all.window, 0);
  EXPECT_EQ(all.rope.type, HfRopeType::llama3);
  EXPECT_EQ(all.rope.head_dim, 128);  // hidden_size 4096 / 32 heads
  EXPECT_EQ(all.rope.rope_theta, 500000);
  EXPECT_EQ(all.rope.original_max_position_embeddings, 8192);

  const json e = explained(explain_hf_rope(model), "all");
  EXPECT_EQ(e["rotated_width"], 128);
  EXPECT_EQ(e["attention_factor"], 1.0);
  EXPECT_EQ(e["bands"]["kept"], 29);
  EXPECT_EQ(e["bands"]["blended"], 6);
  EXPECT_EQ(e["bands"]["interpolated"], 29);
  for (std::size_t i = 0; i < 64; ++i) {
    const double theta = std::pow(500000.0, -2.0 * double(i) / 128);
    const double wavelength = 2 * kPi / theta;
    const std::string band = wavelength < 2048   ? "kept"
                             : wavelength > 8192 ? "interpolated"
                                                 : "blended";
    EXPECT_EQ(e["planes"][i]["band"], band) << "plane " << i;
    EXPECT_NEAR(e["planes"][i]["default_inv_freq"].get<double>(), theta, 1e-15 * theta);
    const double g = (8192 / wavelength - 1) / 3;
    const double expected = band == "kept"           ? theta
                            : band == "interpolated" ? theta / 8
                                                     : (1 - g) * theta / 8 + g * theta;
    EXPECT_NEAR(e["planes"][i]["inv_freq"].get<double>(), expected, 1e-12 * expected) << i;
    EXPECT_NEAR(e["planes"][i]["wavelength_over_context"].get<double>(), 2 * kPi / expected / 8192,
                1e-9);
  }
  EXPECT_EQ(e["planes"][28]["band"], "kept");     // wavelength 1956
  EXPECT_EQ(e["planes"][29]["band"], "blended");  // wavelength 2402: divided by 1.2075
  EXPECT_NEAR(divisor(e, 29), 1.2074838712836620, 1e-9);
  EXPECT_EQ(e["planes"][35]["band"], "interpolated");  // wavelength 8219
}

TEST(Ch11HfConfig, Llama32UsesFactor32OnItsNarrowerHeads) {
  const HfModelRope model = read_example("llama-3.2-1b");
  const json e = explained(explain_hf_rope(model), "all");
  EXPECT_EQ(e["head_dim"], 64);
  EXPECT_EQ(e["factor"], 32.0);
  // 2 pi 500000^(i/32) is under 2048 up to plane 14 and over 8192 from plane 18 on.
  EXPECT_EQ(bands_of(e), std::string(15, 'k') + "bbb" + std::string(14, 'i'));
  EXPECT_NEAR(divisor(e, 31), 32, 1e-12);
}

TEST(Ch11HfConfig, Llama4ScoutHasChunkedRopeLayersAndNopeLayersWithATemperature) {
  const HfModelRope model = read_example("llama-4-scout");
  EXPECT_EQ(model.model_type, "llama4_text");
  EXPECT_EQ(model.layers, 48);
  ASSERT_EQ(model.types.size(), 2u);
  const HfLayerType& rope = type_named(model, "rope");
  const HfLayerType& nope = type_named(model, "nope");
  EXPECT_EQ(nope.layers, range(3, 47, 4));  // no_rope_layers: 0 at every fourth layer
  EXPECT_EQ(rope.layers.size(), 36u);
  EXPECT_TRUE(rope.rotary);
  EXPECT_FALSE(nope.rotary);
  EXPECT_EQ(rope.chunk, 8192);
  EXPECT_EQ(nope.chunk, 0);
  EXPECT_EQ(rope.temperature_floor, 0);
  EXPECT_EQ(nope.temperature_floor, 8192);
  EXPECT_EQ(nope.temperature_scale, 0.1);
  EXPECT_EQ(rope.rope.type, HfRopeType::llama3);
  EXPECT_EQ(rope.rope.factor, 16.0);

  const json x = explain_hf_rope(model, 16384);
  const json& n = explained(x, "nope");
  EXPECT_FALSE(n.contains("planes"));
  // At position 16383: 1 + 0.1 log1p(floor(16384 / 8192)) = 1 + 0.1 ln 3.
  EXPECT_NEAR(n["temperature"]["at_last_position"].get<double>(), 1 + 0.1 * std::log(3.0), 1e-12);
  // high_freq_factor = low_freq_factor = 1: one edge at L0 = 8192, no blended plane; the planes
  // 2 pi 500000^(2i/128) < 8192 are i <= 34
  EXPECT_EQ(explained(x, "rope")["bands"]["kept"], 35);
  EXPECT_EQ(explained(x, "rope")["bands"].value("blended", 0), 0);
  EXPECT_EQ(explained(x, "rope")["bands"]["interpolated"], 29);
}

TEST(Ch11HfConfig, Phi3RescalesEachPlaneByItsShortOrLongFactor) {
  const json file = example("phi-3-mini-128k");
  const HfModelRope model = read_hf_config(file);
  const HfLayerType& all = type_named(model, "all");
  EXPECT_EQ(all.rope.type, HfRopeType::longrope);
  EXPECT_EQ(all.rope.head_dim, 96);                            // 3072 / 32
  EXPECT_EQ(all.rope.original_max_position_embeddings, 4096);  // at the top, as Phi-3 has it

  const json short_pass = explained(explain_hf_rope(model, 4096), "all");
  const json long_pass = explained(explain_hf_rope(model, 8192), "all");
  EXPECT_EQ(short_pass["longrope_factors"], "short_factor");
  EXPECT_EQ(long_pass["longrope_factors"], "long_factor");
  ASSERT_EQ(short_pass["planes"].size(), 48u);
  for (std::size_t i = 0; i < 48; ++i) {
    EXPECT_NEAR(divisor(short_pass, i), file["rope_scaling"]["short_factor"][i].get<double>(),
                1e-12);
    EXPECT_NEAR(divisor(long_pass, i), file["rope_scaling"]["long_factor"][i].get<double>(), 1e-12);
  }
  EXPECT_EQ(short_pass["bands"]["rescaled"], 48);  // no factor is 1: every plane is rescaled
  // sqrt(1 + ln s / ln L0) with s = 131072 / 4096 = 32: 1.19024.
  EXPECT_NEAR(short_pass["attention_factor"].get<double>(), 1.1902380714238083, 1e-12);
  EXPECT_NEAR(long_pass["attention_factor"].get<double>(), 1.1902380714238083, 1e-12);
}

TEST(Ch11HfConfig, Gemma3SlidesLocalLayersAtTheLocalBaseAndInterpolatesGlobalOnes) {
  // The published text_config gives six fields: the rest are Gemma3TextConfig's defaults.
  const HfModelRope model = read_example("gemma-3-4b");
  EXPECT_EQ(model.model_type, "gemma3_text");
  EXPECT_EQ(model.layers, 34);
  ASSERT_EQ(model.types.size(), 2u);
  const HfLayerType& local = type_named(model, "sliding_attention");
  const HfLayerType& global = type_named(model, "full_attention");
  EXPECT_EQ(global.layers, range(5, 29, 6));  // sliding_window_pattern 6
  EXPECT_EQ(local.layers.size(), 29u);
  EXPECT_EQ(local.window, 1024);
  EXPECT_EQ(global.window, 0);
  EXPECT_EQ(local.rope.type, HfRopeType::standard);
  EXPECT_EQ(local.rope.rope_theta, 10000);
  EXPECT_EQ(global.rope.type, HfRopeType::linear);
  EXPECT_EQ(global.rope.rope_theta, 1000000);
  EXPECT_EQ(global.rope.head_dim, 256);

  const json x = explain_hf_rope(model);
  EXPECT_EQ(bands_of(explained(x, "sliding_attention")), std::string(128, 'k'));
  EXPECT_EQ(bands_of(explained(x, "full_attention")), std::string(128, 'i'));
  EXPECT_NEAR(divisor(explained(x, "full_attention"), 0), 8, 1e-12);
}

TEST(Ch11HfConfig, Gemma4StopsThreeQuartersOfItsWideGlobalHeads) {
  const HfModelRope model = read_example("gemma-4-31b");
  EXPECT_EQ(model.model_type, "gemma4_text");
  EXPECT_EQ(model.layers, 60);
  const HfLayerType& local = type_named(model, "sliding_attention");
  const HfLayerType& global = type_named(model, "full_attention");
  EXPECT_EQ(global.layers, range(5, 59, 6));
  EXPECT_EQ(local.layers.size(), 50u);
  EXPECT_EQ(local.window, 1024);
  EXPECT_EQ(local.rope.head_dim, 256);
  EXPECT_EQ(global.rope.head_dim, 512);  // global_head_dim
  EXPECT_EQ(global.rope.type, HfRopeType::proportional);
  EXPECT_EQ(global.rope.partial_rotary_factor, 0.25);

  const json x = explain_hf_rope(model);
  const json& g = explained(x, "full_attention");
  // p-RoPE: 256 planes over the 512-wide head, the first floor(0.25 * 512 / 2) = 64 turning at
  // 1e6^(-2i/512), the other 192 stopped.
  EXPECT_EQ(bands_of(g), std::string(64, 'k') + std::string(192, 'z'));
  EXPECT_NEAR(g["planes"][63]["inv_freq"].get<double>(), std::pow(1e6, -2.0 * 63 / 512), 1e-18);
  EXPECT_TRUE(g["planes"][64]["wavelength"].is_null());
  EXPECT_TRUE(g["planes"][64]["wavelength_over_context"].is_null());
  EXPECT_EQ(bands_of(explained(x, "sliding_attention")), std::string(128, 'k'));
}

TEST(Ch11HfConfig, DeepSeekV3RampsYarnOverItsRotaryPart) {
  const HfModelRope model = read_example("deepseek-v3");
  const HfLayerType& all = type_named(model, "all");
  EXPECT_EQ(all.layers.size(), 61u);
  EXPECT_EQ(all.rope.head_dim, 64);  // qk_rope_head_dim, not 7168 / 128 = 56
  EXPECT_EQ(all.rope.type, HfRopeType::yarn);
  const json e = explained(explain_hf_rope(model), "all");
  // The ramp's ends (find_correction_range): 64 ln(4096 / (2 pi 32)) / (2 ln 10000) = 10.47,
  // floored to 10, and 64 ln(4096 / (2 pi)) / (2 ln 10000) = 22.51, ceiled to 23.
  EXPECT_EQ(bands_of(e), std::string(11, 'k') + std::string(12, 'b') + std::string(9, 'i'));
  EXPECT_NEAR(divisor(e, 31), 40, 1e-12);
  // mscale = mscale_all_dim: the rope's factor is 1, and the softmax scale carries
  // get_mscale(40)^2 = (0.1 ln 40 + 1)^2.
  EXPECT_NEAR(e["attention_factor"].get<double>(), 1.0, 1e-15);
  EXPECT_NEAR(e["softmax_scale_factor"].get<double>(), std::pow(0.1 * std::log(40.0) + 1, 2),
              1e-12);
}

TEST(Ch11HfConfig, Qwen3KeepsEveryPlane) {
  const HfModelRope model = read_example("qwen3-8b");
  ASSERT_EQ(model.types.size(), 1u);
  const HfLayerType& all = type_named(model, "all");
  EXPECT_EQ(all.layers.size(), 36u);
  EXPECT_EQ(all.window, 0);  // use_sliding_window false
  EXPECT_EQ(all.rope.type, HfRopeType::standard);
  const json e = explained(explain_hf_rope(model, 40960), "all");
  EXPECT_EQ(bands_of(e), std::string(64, 'k'));
  EXPECT_EQ(e["rope_theta"], 1000000.0);
  EXPECT_EQ(e["original_context"], 40960);  // max_position_embeddings: no original is given
}

// Llama 4 as transformers v5 saves it (layer_types "chunked_attention" for the rotating
// layers, "full_attention" for the NoPE ones), a layer type holding both kinds, and
// Qwen3-Next's linear_attention layers, which do not rotate.
TEST(Ch11HfConfig, NamesTheKindsWithinLayerTypes) {
  json v5 = example("llama-4-scout");
  json& text = v5["text_config"];
  text["layer_types"] = json::array();
  for (int i = 0; i < 48; ++i)
    text["layer_types"].push_back((i + 1) % 4 ? "chunked_attention" : "full_attention");
  const HfModelRope saved = read_hf_config(v5);
  ASSERT_EQ(saved.types.size(), 2u);
  EXPECT_EQ(type_named(saved, "chunked_attention").chunk, 8192);
  EXPECT_EQ(type_named(saved, "full_attention").layers, range(3, 47, 4));
  EXPECT_EQ(type_named(saved, "full_attention").temperature_floor, 8192);
  EXPECT_FALSE(type_named(saved, "full_attention").rotary);

  for (auto& t : text["layer_types"]) t = "full_attention";
  const HfModelRope mixed = read_hf_config(v5);
  EXPECT_EQ(type_named(mixed, "full_attention/nope").layers, range(3, 47, 4));
  EXPECT_EQ(type_named(mixed, "full_attention/rope").chunk, 8192);
  EXPECT_EQ(type_named(mixed, "full_attention/nope").chunk, 0);

  json next = example("qwen3-8b");
  next["layer_types"] = json::array();
  for (int i = 0; i < 36; ++i)
    next["layer_types"].push_back((i + 1) % 4 ? "linear_attention" : "full_attention");
  const HfModelRope hybrid = read_hf_config(next);
  EXPECT_FALSE(type_named(hybrid, "linear_attention").rotary);
  EXPECT_EQ(type_named(hybrid, "full_attention").layers, range(3, 35, 4));
  EXPECT_EQ(type_named(hybrid, "full_attention").rope.rope_theta, 1000000);
}

// The explanation's numbers are hf_rope_frequencies's, for every example and layer type.
TEST(Ch11HfConfig, ExplanationsAreHfRopeFrequencies) {
  for (const auto& name : kExamples) {
    const HfModelRope model = read_example(name);
    for (const std::int64_t length : {0, 100000}) {
      const json x = explain_hf_rope(model, length);
      std::int64_t layers = 0;
      for (const auto& t : model.types) {
        layers += std::int64_t(t.layers.size());
        const json& e = explained(x, t.name);
        EXPECT_EQ(e["layers"].get<std::vector<std::int64_t>>(), t.layers) << name;
        if (!t.rotary) continue;
        const HfRopeFrequencies f = hf_rope_frequencies(t.rope, length);
        ASSERT_EQ(e["planes"].size(), f.inv_freq.size()) << name << " " << t.name;
        for (std::size_t i = 0; i < f.inv_freq.size(); ++i)
          EXPECT_EQ(e["planes"][i]["inv_freq"].get<double>(), f.inv_freq[i]) << name << i;
        EXPECT_EQ(e["attention_factor"].get<double>(), f.attention_factor) << name;
        EXPECT_EQ(e["rotated_width"], f.rotated_width) << name;
      }
      EXPECT_EQ(layers, model.layers) << name << ": every layer in exactly one type";
    }
  }
}

TEST(Ch11HfConfig, TableIsABlockPerLayerTypeAndALinePerBand) {
  for (const auto& name : kExamples) {
    const std::string table = hf_rope_table(read_example(name), 8192);
    const auto lines = std::count(table.begin(), table.end(), '\n');
    EXPECT_LT(lines, 24) << name << ":\n" << table;
    EXPECT_NE(table.find(" planes ("), std::string::npos) << name << ":\n" << table;
  }
  const std::string scout = hf_rope_table(read_example("llama-4-scout"));
  EXPECT_NE(scout.find("nope: 12 layers (3, 7, 11, 15, 19, ..., 47)"), std::string::npos) << scout;
  EXPECT_NE(scout.find("no rotation (NoPE)"), std::string::npos) << scout;
  const std::string llama = hf_rope_table(read_example("llama-3.1-8b"));
  EXPECT_NE(llama.find("blended       6 planes (29-34)"), std::string::npos) << llama;
}

TEST(Ch11HfConfig, BandsAreDecidedFromTheValues) {
  EXPECT_EQ(hf_band(1.0, 1.0, 8), HfBand::kept);
  EXPECT_EQ(hf_band(1.0, 1.0 + 1e-12, 8), HfBand::kept);  // within the tolerance 1e-9
  EXPECT_EQ(hf_band(1.0, 1.0 + 1e-6, 8), HfBand::blended);
  EXPECT_EQ(hf_band(0.125, 1.0, 8), HfBand::interpolated);
  EXPECT_EQ(hf_band(0.5, 1.0, 8), HfBand::blended);
  EXPECT_EQ(hf_band(0.0625, 1.0, 8), HfBand::rescaled);  // divided by more than the factor
  EXPECT_EQ(hf_band(2.0, 1.0, 8), HfBand::rescaled);     // turned faster
  EXPECT_EQ(hf_band(0.5, 1.0, 1), HfBand::rescaled);     // no factor: longrope's lists
  EXPECT_EQ(hf_band(0.0, 1.0, 1), HfBand::zero);
  for (const HfBand b :
       {HfBand::kept, HfBand::interpolated, HfBand::blended, HfBand::rescaled, HfBand::zero})
    EXPECT_FALSE(hf_band_name(b).empty());
}

// A malformed config, refused in one line that holds `fragment`.
void expect_refused(const json& config, const std::string& fragment) {
  try {
    read_hf_config(config);
    ADD_FAILURE() << "accepted; expected an error holding: " << fragment;
  } catch (const ag::Error& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    EXPECT_NE(message.find(fragment), std::string::npos)
        << "message: " << message << "\nexpected to hold: " << fragment;
  }
}

json edited(const std::string& name, const std::function<void(json&)>& edit) {
  json config = example(name);
  edit(config);
  return config;
}

TEST(Ch11HfConfig, RefusesAMissingOrUnknownRopeField) {
  expect_refused(
      edited("llama-3.1-8b", [](json& c) { c["rope_scaling"].erase("low_freq_factor"); }),
      "config.json: rope_scaling.low_freq_factor is missing (llama3 needs it)");
  expect_refused(edited("llama-3.1-8b", [](json& c) { c["rope_scaling"]["rope_type"] = "cubic"; }),
                 "config.json: rope_scaling.rope_type: ");
  expect_refused(
      edited("gemma-3-4b", [](json& c) { c["text_config"]["rope_scaling"].erase("factor"); }),
      "text_config.rope_scaling.factor is missing (linear needs it)");
  expect_refused(edited("qwen3-8b", [](json& c) { c.erase("num_hidden_layers"); }),
                 "num_hidden_layers is missing");
  expect_refused(
      edited("llama-4-scout", [](json& c) { c["text_config"]["floor_scale"] = nullptr; }),
      "text_config.floor_scale is missing (attn_temperature_tuning needs it)");
}

TEST(Ch11HfConfig, RefusesAFieldOfTheWrongType) {
  expect_refused(edited("llama-3.1-8b", [](json& c) { c["rope_scaling"]["rope_type"] = 3; }),
                 "rope_scaling.rope_type must be a string, got 3");
  expect_refused(edited("llama-3.1-8b", [](json& c) { c["rope_theta"] = "500000"; }),
                 "rope_theta must be a number, got \"500000\"");
  expect_refused(edited("llama-3.1-8b", [](json& c) { c["rope_scaling"] = 8; }),
                 "rope_scaling must be an object, got 8");
  expect_refused(
      edited("llama-4-scout", [](json& c) { c["text_config"]["no_rope_layers"][3] = 2; }),
      "text_config.no_rope_layers[3] must be 1 (the layer rotates) or 0");
  expect_refused(edited("llama-3.1-8b", [](json& c) { c["num_hidden_layers"] = 3.5; }),
                 "num_hidden_layers must be a whole number from 1 to 65536, got 3.5");
}

TEST(Ch11HfConfig, RefusesPerLayerListsOfTheWrongLength) {
  expect_refused(edited("gemma-4-31b", [](json& c) { c["text_config"]["layer_types"].erase(0); }),
                 "text_config.layer_types has 59 entries, expected one per layer: "
                 "text_config.num_hidden_layers is 60");
  expect_refused(
      edited("llama-4-scout", [](json& c) { c["text_config"]["no_rope_layers"].erase(0); }),
      "text_config.no_rope_layers has 47 entries");
  expect_refused(
      edited("phi-3-mini-128k", [](json& c) { c["rope_scaling"]["long_factor"].erase(0); }),
      "rope_scaling.long_factor has 47 entries, expected one per plane: 48 (rotated width 96 / 2)");
}

TEST(Ch11HfConfig, RefusesRopeParametersForLayerTypesThatDoNotOccur) {
  expect_refused(edited("gemma-4-31b",
                        [](json& c) {
                          json& p = c["text_config"]["rope_parameters"];
                          p["global_attention"] = p["full_attention"];
                          p.erase("full_attention");
                        }),
                 "text_config.rope_parameters.global_attention: no layer has type "
                 "global_attention (layer_types has full_attention, sliding_attention)");
  expect_refused(
      edited("gemma-4-31b",
             [](json& c) { c["text_config"]["rope_parameters"].erase("sliding_attention"); }),
      "text_config.rope_parameters has no entry for layer type sliding_attention");
  expect_refused(edited("llama-3.1-8b",
                        [](json& c) {
                          c["rope_parameters"] = {{"full_attention", {{"rope_type", "default"}}}};
                          c.erase("rope_scaling");
                        }),
                 "rope_parameters.full_attention: no layer has type full_attention (the config "
                 "has no layer_types)");
}

TEST(Ch11HfConfig, RefusesContradictions) {
  // A partial_rotary_factor that turns an odd number of coordinates: int(128 * 0.2) = 25.
  expect_refused(edited("llama-3.1-8b", [](json& c) { c["partial_rotary_factor"] = 0.2; }),
                 "partial_rotary_factor 0.2 turns int(128 * 0.2) = 25 coordinates");
  expect_refused(edited("llama-3.1-8b", [](json& c) { c["rope_parameters"] = c["rope_scaling"]; }),
                 "rope_scaling and rope_parameters are both given");
  expect_refused(edited("llama-3.1-8b", [](json& c) { c["rope_scaling"]["rope_theta"] = 10000; }),
                 "rope_scaling.rope_theta 10000 contradicts rope_theta 500000");
  expect_refused(
      edited("phi-3-mini-128k",
             [](json& c) { c["rope_scaling"]["original_max_position_embeddings"] = 8192; }),
      "original_max_position_embeddings 4096 contradicts "
      "rope_scaling.original_max_position_embeddings 8192");
  expect_refused(edited("deepseek-v3", [](json& c) { c["rope_scaling"]["rope_type"] = "linear"; }),
                 "rope_scaling.rope_type 'linear' contradicts rope_scaling.type 'yarn'");
  expect_refused(
      edited("gemma-4-31b", [](json& c) { c["text_config"]["sliding_window_pattern"] = 5; }),
      "text_config.sliding_window_pattern 5 contradicts text_config.layer_types: layer 4 is "
      "sliding_attention");
  expect_refused(
      edited("llama-4-scout", [](json& c) { c["text_config"]["no_rope_layer_interval"] = 3; }),
      "text_config.no_rope_layer_interval 3 contradicts text_config.no_rope_layers");
  expect_refused(edited("llama-3.1-8b", [](json& c) { c["num_attention_heads"] = 30; }),
                 "hidden_size 4096 is not a multiple of num_attention_heads 30");
  expect_refused(edited("qwen3-8b",
                        [](json& c) {
                          c["layer_types"] = json::array();
                          for (int i = 0; i < 36; ++i)
                            c["layer_types"].push_back("sliding_attention");
                          c["sliding_window"] = 4096;
                        }),
                 "use_sliding_window is false, but layer 0 is sliding_attention");
}

TEST(Ch11HfConfig, RefusesValuesOutOfRangeThroughCheckHfRope) {
  // check_hf_rope's own checks (factor >= 1 here), named after the dict they came from.
  try {
    read_hf_config(
        edited("gemma-3-4b", [](json& c) { c["text_config"]["rope_scaling"]["factor"] = 0.5; }));
    ADD_FAILURE() << "a linear factor of 0.5 was accepted";
  } catch (const ag::Error& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    EXPECT_EQ(message.rfind("config.json: text_config.rope_scaling: ", 0), 0u) << message;
    EXPECT_NE(message.find("factor"), std::string::npos) << message;
  }
}

TEST(Ch11HfConfig, RefusesTextThatIsNotAConfig) {
  const auto message = [](const std::function<void()>& read) {
    try {
      read();
    } catch (const ag::Error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  const std::string bad_json = message([] { read_hf_config_text("{\"rope_theta\": ", "x.json"); });
  EXPECT_EQ(bad_json.rfind("x.json: not valid JSON: parse error", 0), 0u) << bad_json;
  EXPECT_EQ(bad_json.find('\n'), std::string::npos) << bad_json;
  EXPECT_EQ(message([] { read_hf_config_text("[1, 2]", "x.json"); }),
            "x.json: expected a JSON object (a model's config.json), got [1,2]");
  const std::string missing = message([] { read_hf_config_file("/nonexistent/config.json"); });
  EXPECT_NE(missing.find("/nonexistent/config.json"), std::string::npos) << missing;
  // An error in a file names the file.
  const std::string file = message([] {
    read_hf_config_text(
        "{\"num_hidden_layers\": 2, \"head_dim\": 64, \"rope_scaling\": {\"rope_type\": \"yarn\"}}",
        "models/x/config.json");
  });
  EXPECT_EQ(file.rfind("models/x/config.json: ", 0), 0u) << file;
}

TEST(Ch11HfConfig, ReadsTransformersV5AndOlderSpellings) {
  // rope_parameters (v5) reads as rope_scaling (v4); "type" as "rope_type"; Phi-3's "su" as
  // longrope; a JSON null as an absent field.
  const json v4 = example("llama-3.1-8b");
  json v5 = v4;
  v5["rope_parameters"] = v5["rope_scaling"];
  v5["rope_parameters"]["rope_theta"] = 500000.0;
  v5.erase("rope_scaling");
  v5.erase("rope_theta");
  EXPECT_EQ(explain_hf_rope(read_hf_config(v5)), explain_hf_rope(read_hf_config(v4)));
  json su = example("phi-3-mini-128k");
  su["rope_scaling"]["type"] = "su";
  EXPECT_EQ(type_named(read_hf_config(su), "all").rope.type, HfRopeType::longrope);
  json nulls = v4;
  nulls["sliding_window"] = nullptr;
  nulls["partial_rotary_factor"] = nullptr;
  EXPECT_EQ(explain_hf_rope(read_hf_config(nulls)), explain_hf_rope(read_hf_config(v4)));
  // Mistral 7B v0.1: a sliding_window alone slides every layer.
  json mistral = {{"model_type", "mistral"}, {"num_hidden_layers", 32},
                  {"hidden_size", 4096},     {"num_attention_heads", 32},
                  {"sliding_window", 4096},  {"max_position_embeddings", 32768}};
  const HfModelRope m = read_hf_config(mistral);
  ASSERT_EQ(m.types.size(), 1u);
  EXPECT_EQ(m.types[0].window, 4096);
  EXPECT_EQ(m.types[0].rope.rope_theta, 10000);  // transformers' default_theta
}

}  // namespace
// The chapter quotes results/configs.json (programs/tools/refresh-results.sh writes it from
// `pe inspect rope --hf-config`): each example's table there is what the code prints now.
TEST(Ch11HfConfig, TheQuotedTablesAreWhatTheCodePrints) {
  std::ifstream in(std::string(PE_CH11_CONFIGS) + "/../results/configs.json");
  ASSERT_TRUE(in.good()) << "results/configs.json";
  const json quoted = json::parse(in)["tables"];
  EXPECT_EQ(quoted.size(), kExamples.size());
  for (const std::string& name : kExamples) {
    ASSERT_TRUE(quoted.contains(name)) << name;
    std::string text;
    for (const std::string& line : quoted[name].get<std::vector<std::string>>())
      text += line + "\n";
    EXPECT_EQ(text, hf_rope_table(read_example(name))) << name << ": run refresh-results.sh";
  }
}

}  // namespace pe
