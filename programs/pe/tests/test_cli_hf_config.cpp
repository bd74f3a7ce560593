// `pe inspect rope --hf-config FILE`: a model's config.json explained (chapter 11's
// hf_config.hpp), run as a reader runs it on the chapter's example configs; a missing file,
// text that is not JSON and a malformed field are each one line and a non-zero exit.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "programs/pe/tests/run_pe.hpp"

#ifndef PE_SOURCE_DIR
#error "PE_SOURCE_DIR must name the source tree (the example configs are in chapter 11)"
#endif

namespace {

using pe_test::expect_one_line_error;
using pe_test::Outcome;
using pe_test::run;

std::string example(const std::string& name) {
  return std::string(PE_SOURCE_DIR) + "/chapters/11-todays-models/configs/" + name + ".json";
}

// A file under the test's temporary folder holding `text`.
std::string written(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "pe_cli_hf_config_" + name;
  std::ofstream(path) << text;
  return path;
}

// chapter: 11
TEST(CliHfConfig, PrintsATableOfBandsPerLayerType) {
  const Outcome o = run("inspect rope --hf-config " + example("llama-3.1-8b"));
  ASSERT_EQ(o.exit_code, 0) << o.output;
  EXPECT_NE(o.output.find("all: 32 layers (0-31)"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("llama3 rope: head_dim 128"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("kept          29 planes (0-28)"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("blended       6 planes (29-34)"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("interpolated  29 planes (35-63)"), std::string::npos) << o.output;
  EXPECT_LT(o.lines(), 12) << o.output;

  const Outcome scout =
      run("inspect rope --hf-config " + example("llama-4-scout") + " --length 16384");
  ASSERT_EQ(scout.exit_code, 0) << scout.output;
  EXPECT_NE(scout.output.find("for a pass over 16384 positions"), std::string::npos);
  EXPECT_NE(scout.output.find("no rotation (NoPE)"), std::string::npos) << scout.output;
  EXPECT_NE(scout.output.find("chunks of 8192"), std::string::npos) << scout.output;
}

// chapter: 11
TEST(CliHfConfig, PrintsTheExplanationAsJson) {
  const Outcome o = run("inspect rope --hf-config " + example("gemma-4-31b") + " --json");
  ASSERT_EQ(o.exit_code, 0) << o.output;
  const auto x = nlohmann::json::parse(o.output);
  EXPECT_EQ(x["model_type"], "gemma4_text");
  EXPECT_EQ(x["seq_len"], 0);
  ASSERT_EQ(x["layer_types"].size(), 2u);
  for (const auto& e : x["layer_types"]) {
    if (e["name"] != "full_attention") continue;
    EXPECT_EQ(e["rope_type"], "proportional");
    EXPECT_EQ(e["bands"]["kept"], 64);
    EXPECT_EQ(e["bands"]["zero"], 192);
  }
  const Outcome phi =
      run("inspect rope --hf-config " + example("phi-3-mini-128k") + " --json --length 8192");
  ASSERT_EQ(phi.exit_code, 0) << phi.output;
  EXPECT_EQ(nlohmann::json::parse(phi.output)["layer_types"][0]["longrope_factors"], "long_factor");
}

// chapter: 11
TEST(CliHfConfig, RefusesInOneLine) {
  expect_one_line_error(run("inspect rope --hf-config /nonexistent/config.json"),
                        "/nonexistent/config.json", "a missing file");
  const std::string broken = written("broken.json", "{\"rope_theta\": ");
  expect_one_line_error(run("inspect rope --hf-config " + broken), "not valid JSON",
                        "text that is not JSON");
  const std::string no_low =
      written("no_low.json",
              "{\"num_hidden_layers\": 2, \"hidden_size\": 256, \"num_attention_heads\": 2, "
              "\"rope_scaling\": {\"rope_type\": \"llama3\", \"factor\": 8, "
              "\"high_freq_factor\": 4, \"original_max_position_embeddings\": 8192}}");
  expect_one_line_error(run("inspect rope --hf-config " + no_low),
                        "rope_scaling.low_freq_factor is missing (llama3 needs it)",
                        "a missing field");
  expect_one_line_error(run("inspect alibi --hf-config " + example("qwen3-8b")),
                        "goes with `pe inspect rope`", "another encoding");
  expect_one_line_error(run("inspect rope --hf-config " + example("qwen3-8b") + " --dim 8"),
                        "--dim", "an option of the encoding's inspection");
  expect_one_line_error(run("inspect rope --json"), "--json", "--json without --hf-config");
}

// chapter: 11
TEST(CliHfConfig, HelpNamesIt) {
  const Outcome top = run("--help");
  EXPECT_NE(top.output.find("--hf-config"), std::string::npos) << top.output;
  const Outcome inspect = run("inspect --help");
  EXPECT_NE(inspect.output.find("--hf-config"), std::string::npos) << inspect.output;
  EXPECT_NE(inspect.output.find("--json"), std::string::npos) << inspect.output;
}

}  // namespace
