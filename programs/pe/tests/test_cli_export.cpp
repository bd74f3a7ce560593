// `pe export`: a checkpoint as a safetensors file, with every parameter, the model's
// description and a check input with the logits of this build (appendix D reads them in
// PyTorch); bad checkpoints and outputs are one-line errors.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "programs/pe/tests/run_pe.hpp"

namespace {

using pe_test::expect_one_line_error;
using pe_test::fresh_dir;
using pe_test::kTinyTrain;
using pe_test::Outcome;
using pe_test::run;

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The JSON header of a safetensors file (its first 8 bytes give the header's length).
nlohmann::json header_of(const std::string& bytes) {
  std::uint64_t length = 0;
  for (int i = 0; i < 8; ++i) length |= std::uint64_t(std::uint8_t(bytes.at(i))) << (8 * i);
  return nlohmann::json::parse(bytes.substr(8, length));
}

// A trained tiny model of `encoding` in dir/run; its checkpoint.
std::string trained(const std::string& dir, const std::string& encoding) {
  const Outcome o = run(kTinyTrain + " -e " + encoding + " --layers 2 --out " + dir + "/run");
  EXPECT_EQ(o.exit_code, 0) << o.output;
  return dir + "/run/checkpoint.agt";
}

}  // namespace

TEST(CliExport, WritesParametersDescriptionAndCheckLogits) {
  const std::string dir = fresh_dir("pe_cli_export");
  const std::string checkpoint = trained(dir, "rope");
  const Outcome o = run("export " + checkpoint + " --out " + dir + "/model.safetensors " +
                        "--length 12 --batch 3 -o scaling=linear -o scale=2");
  ASSERT_EQ(o.exit_code, 0) << o.output;
  EXPECT_NE(o.output.find("check logits [3, 12, 26]"), std::string::npos) << o.output;
  const std::string bytes = read_bytes(dir + "/model.safetensors");
  const nlohmann::json header = header_of(bytes);

  const auto model = nlohmann::json::parse(header["__metadata__"]["model"].get<std::string>());
  EXPECT_EQ(model["encoding"], "rope");
  EXPECT_EQ(model["encoding_options"]["scaling"], "linear") << "-o replaces the run's options";
  EXPECT_EQ(model["layers"], 2);
  EXPECT_EQ(model["width"], 16);
  EXPECT_EQ(model["vocab"], 26);
  const auto check = nlohmann::json::parse(header["__metadata__"]["check"].get<std::string>());
  EXPECT_EQ(check["length"], 12);
  EXPECT_TRUE(header["__metadata__"].contains("versions"));

  EXPECT_EQ(header["check.tokens"]["dtype"], "I64");
  EXPECT_EQ(header["check.tokens"]["shape"], nlohmann::json({3, 12}));
  EXPECT_EQ(header["check.logits"]["dtype"], "F32");
  EXPECT_EQ(header["check.logits"]["shape"], nlohmann::json({3, 12, 26}));
  // Every parameter under its checkpoint name, as dotted as in C++.
  for (const char* name : {"tokens.weight", "blocks.1.attention.query.weight",
                           "blocks.0.norm1.gamma", "final_norm.beta", "head.bias"})
    EXPECT_EQ(header[name]["dtype"], "F32") << name;
  EXPECT_EQ(header["head.weight"]["shape"], nlohmann::json({16, 26})) << "[in, out], as in C++";

  // The same checkpoint and seed give the same file, byte for byte.
  ASSERT_EQ(run("export " + checkpoint + " --out " + dir + "/again.safetensors --length 12 " +
                "--batch 3 -o scaling=linear -o scale=2")
                .exit_code,
            0);
  EXPECT_EQ(read_bytes(dir + "/again.safetensors"), bytes);
}

TEST(CliExport, BadCheckpointsAndOutputsAreOneLineErrors) {
  const std::string dir = fresh_dir("pe_cli_export_errors");
  const std::string checkpoint = trained(dir, "learned");
  const std::string out = " --out " + dir + "/x.safetensors";
  std::ofstream(dir + "/corrupt.agt") << "not a checkpoint";
  std::filesystem::create_directories(dir + "/folder");
  std::filesystem::create_symlink(dir + "/elsewhere.safetensors", dir + "/link.safetensors");
  const std::vector<std::pair<std::string, std::string>> cases{
      {"export " + dir + "/missing.agt" + out, "File does not exist"},
      {"export " + dir + "/corrupt.agt" + out, "is not a tensor file"},
      {"export " + checkpoint, "--out is required"},
      {"export " + checkpoint + " --out " + dir + "/folder", "is not a regular file"},
      {"export " + checkpoint + " --out " + dir + "/link.safetensors", "is not a regular file"},
      {"export " + checkpoint + " --out " + dir + "/no/such/folder.safetensors", "cannot write"},
      // the learned table has the training length's 8 rows
      {"export " + checkpoint + out + " --length 9", "cannot run the check input of length 9"},
      {"export " + checkpoint + out + " -o base=3", "base"}};
  for (const auto& [args, fragment] : cases) expect_one_line_error(run(args), fragment, args);
  EXPECT_FALSE(std::filesystem::exists(dir + "/x.safetensors")) << "nothing written on error";
  EXPECT_FALSE(std::filesystem::exists(dir + "/elsewhere.safetensors"));
}
