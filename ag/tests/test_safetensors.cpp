// safetensors files: the header parses back to the names, dtypes, shapes and offsets written,
// the values follow it back to back, and bad entries are clear errors.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "ag/safetensors.hpp"

using namespace ag;

namespace {

// The header's length (the first 8 bytes, little-endian) and its JSON.
struct Parsed {
  std::uint64_t header_length = 0;
  nlohmann::json header;
  std::string data;  // every byte after the header
};

Parsed parse(const std::string& bytes) {
  Parsed p;
  EXPECT_GE(bytes.size(), 8u);
  for (int i = 0; i < 8; ++i) p.header_length |= std::uint64_t(std::uint8_t(bytes[i])) << (8 * i);
  EXPECT_LE(8 + p.header_length, bytes.size());
  const std::string text = bytes.substr(8, p.header_length);
  EXPECT_EQ(text.front(), '{');  // the format's readers check that it starts as an object
  p.header = nlohmann::json::parse(text);
  p.data = bytes.substr(8 + p.header_length);
  return p;
}

std::string error_of(const SafetensorsEntries& entries, const Metadata& metadata = {}) {
  try {
    safetensors_bytes(entries, metadata);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST(Safetensors, HeaderParsesBackToWhatWasWritten) {
  Rng rng(1);
  const Tensor a = randn({2, 3}, rng), b = randn({4}, rng, Dtype::f64), s = scalar(2.5);
  const Indices ids{{3, 1, 4, 1, 5, 9}, {2, 3}};
  const Tensor empty_rows = zeros({0, 3});
  const Metadata metadata{
      {"config", "{\"layers\": 2}"}, {"note", "a \"quote\", a \\ and\n\t"}, {"π", "ünïcode"}};
  const Parsed p = parse(safetensors_bytes(
      {{"a", a}, {"blocks.0.b", b}, {"scalar", s}, {"check.tokens", ids}, {"empty", empty_rows}},
      metadata));

  EXPECT_EQ(p.header_length % 8, 0u) << "the values must start 8-byte aligned";
  // Metadata values are strings, whatever they look like: "{\"layers\": 2}" stays text.
  ASSERT_TRUE(p.header.contains("__metadata__"));
  EXPECT_EQ(p.header["__metadata__"].size(), metadata.size());
  for (const auto& [key, value] : metadata) {
    ASSERT_TRUE(p.header["__metadata__"][key].is_string()) << key;
    EXPECT_EQ(p.header["__metadata__"][key].get<std::string>(), value) << key;
  }
  struct Expected {
    const char* name;
    const char* dtype;
    std::vector<std::int64_t> shape;
    std::size_t bytes;
  };
  const std::vector<Expected> expected{{"a", "F32", {2, 3}, 24},
                                       {"blocks.0.b", "F64", {4}, 32},
                                       {"scalar", "F32", {}, 4},
                                       {"check.tokens", "I64", {2, 3}, 48},
                                       {"empty", "F32", {0, 3}, 0}};
  EXPECT_EQ(p.header.size(), expected.size() + 1);
  std::size_t end = 0;  // the tensors lie back to back, in the order given, from offset 0
  for (const auto& e : expected) {
    ASSERT_TRUE(p.header.contains(e.name)) << e.name;
    const auto& entry = p.header[e.name];
    EXPECT_EQ(entry["dtype"], e.dtype) << e.name;
    EXPECT_EQ(entry["shape"].get<std::vector<std::int64_t>>(), e.shape) << e.name;
    const auto offsets = entry["data_offsets"].get<std::vector<std::size_t>>();
    ASSERT_EQ(offsets.size(), 2u);
    EXPECT_EQ(offsets[0], end) << e.name;
    EXPECT_EQ(offsets[1], end + e.bytes) << e.name;
    end = offsets[1];
  }
  EXPECT_EQ(p.data.size(), end) << "no bytes after the last tensor";

  // The values, read back from their offsets.
  std::vector<float> a_back(6);
  std::memcpy(a_back.data(), p.data.data(), 24);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(a_back[i], a.data<float>()[i]);
  std::vector<double> b_back(4);
  std::memcpy(b_back.data(), p.data.data() + 24, 32);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(b_back[i], b.data<double>()[i]);
  float s_back = 0;
  std::memcpy(&s_back, p.data.data() + 56, 4);
  EXPECT_EQ(s_back, 2.5f);
  std::vector<std::int64_t> ids_back(6);
  std::memcpy(ids_back.data(), p.data.data() + 60, 48);
  EXPECT_EQ(ids_back, ids.values);
}

TEST(Safetensors, NoMetadataIsAnEmptyObject) {
  const Parsed p = parse(safetensors_bytes({}));
  EXPECT_EQ(p.header, nlohmann::json::parse(R"({"__metadata__": {}})"));
  EXPECT_EQ(p.header_length % 8, 0u);
  EXPECT_TRUE(p.data.empty());
}

TEST(Safetensors, BadEntriesAreErrorsNamingThem) {
  const Tensor x = zeros({2});
  EXPECT_NE(error_of({{"w", x}, {"w", x}}).find("two tensors are named 'w'"), std::string::npos);
  EXPECT_NE(error_of({{"__metadata__", x}}).find("'__metadata__' is the metadata's key"),
            std::string::npos);
  EXPECT_NE(error_of({{"", x}}).find("needs a name"), std::string::npos);
  EXPECT_NE(error_of({{"bad\xff", x}}).find("is not valid UTF-8"), std::string::npos);
  EXPECT_NE(error_of({{"w", x}}, {{"config", "\xc0\xaf"}}).find("of metadata key 'config'"),
            std::string::npos)
      << "an overlong encoding is not UTF-8";
  EXPECT_NE(error_of({{"w", x}}, {{"cut", "\xe2\x82"}}).find("not valid UTF-8"), std::string::npos);
  EXPECT_NE(error_of({{"ids", Indices{{1, 2, 3}, {2, 2}}}}).find("'ids' has 3 ids"),
            std::string::npos);
  EXPECT_NE(error_of({{"w", Tensor()}}).find("undefined"), std::string::npos);
}

TEST(Safetensors, SaveWritesTheBytesWholeOrNothing) {
  const std::string path = ::testing::TempDir() + "ag_safetensors.safetensors";
  const SafetensorsEntries entries{{"w", full({3}, 1.5)}};
  save_safetensors(path, entries, {{"k", "v"}});
  std::ifstream in(path, std::ios::binary);
  const std::string written{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  EXPECT_EQ(written, safetensors_bytes(entries, {{"k", "v"}}));

  const std::string missing = ::testing::TempDir() + "no_such_folder/x.safetensors";
  EXPECT_THROW(save_safetensors(missing, entries), Error);
  EXPECT_FALSE(std::filesystem::exists(missing));
  // A bad entry is refused before anything is written.
  std::filesystem::remove(path);
  EXPECT_THROW(save_safetensors(path, {{"w", full({1}, 1.0)}, {"w", full({1}, 2.0)}}), Error);
  EXPECT_FALSE(std::filesystem::exists(path));
}
