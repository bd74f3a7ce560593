// Checkpoints: a round trip keeps every value; bad files are clear errors.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "ag/io.hpp"

using namespace ag;

namespace {
std::string temp_path(const std::string& name) { return ::testing::TempDir() + name; }

struct Tiny : Module {
  Linear layer;
  explicit Tiny(Rng& rng, std::int64_t out = 3) : layer(2, out, rng) {
    register_module("layer", layer);
  }
};

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}
void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}
}  // namespace

TEST(Io, RoundTripKeepsNamesShapesDtypesAndValues) {
  const std::string path = temp_path("roundtrip.agt");
  Rng rng(1);
  NamedTensors saved{
      {"a", randn({2, 3}, rng)}, {"b", randn({4}, rng, Dtype::f64)}, {"scalar", scalar(2.5)}};
  save_tensors(path, saved);
  NamedTensors loaded = load_tensors(path);
  ASSERT_EQ(loaded.size(), saved.size());
  for (std::size_t i = 0; i < saved.size(); ++i) {
    EXPECT_EQ(loaded[i].first, saved[i].first);
    EXPECT_EQ(loaded[i].second.shape(), saved[i].second.shape());
    EXPECT_EQ(loaded[i].second.dtype(), saved[i].second.dtype());
    EXPECT_EQ(loaded[i].second.to_vector(), saved[i].second.to_vector());
  }
}

TEST(Io, ModuleRoundTrip) {
  const std::string path = temp_path("module.agt");
  Rng rng(2), other(3);
  Tiny a(rng), b(other);
  save_module(path, a);
  load_module(path, b);
  EXPECT_EQ(a.layer.weight.to_vector(), b.layer.weight.to_vector());
  EXPECT_EQ(a.layer.bias.to_vector(), b.layer.bias.to_vector());
}

TEST(Io, MissingFileIsAnErrorNamingIt) {
  try {
    load_tensors("/nonexistent/dir/file.agt");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/dir/file.agt"), std::string::npos);
  }
  EXPECT_THROW(save_tensors("/nonexistent/dir/file.agt", {}), Error);
}

TEST(Io, ForeignTruncatedAndCorruptFilesAreErrors) {
  const std::string path = temp_path("bad.agt");
  Rng rng(4);
  save_tensors(path, {{"w", randn({8, 8}, rng)}});
  const std::string good = read_bytes(path);

  write_bytes(path, "hello, not a checkpoint at all");
  EXPECT_THROW(load_tensors(path), Error);

  write_bytes(path, good.substr(0, good.size() / 2));
  EXPECT_THROW(load_tensors(path), Error);

  std::string flipped = good;
  flipped[good.size() / 2] ^= 0x40;
  write_bytes(path, flipped);
  try {
    load_tensors(path);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("corrupt"), std::string::npos) << e.what();
  }
}

TEST(Io, LoadingIntoADifferentModelIsAnErrorAndChangesNothing) {
  const std::string path = temp_path("mismatch.agt");
  Rng rng(5);
  Tiny three(rng, 3), four(rng, 4);
  save_module(path, three);
  const auto before = four.layer.weight.to_vector();
  EXPECT_THROW(load_module(path, four), Error);
  EXPECT_EQ(four.layer.weight.to_vector(), before);
}

TEST(Io, MetadataRoundTrip) {
  const std::string path = temp_path("meta.agt");
  save_tensors(path, {{"x", ones({2})}}, {{"config", "{\"a\": 1}"}, {"step", "42"}});
  TensorFile file = load_tensor_file(path);
  EXPECT_EQ(file.metadata.at("config"), "{\"a\": 1}");
  EXPECT_EQ(file.metadata.at("step"), "42");
  ASSERT_EQ(file.tensors.size(), 1u);
}

TEST(Io, RngStateRoundTripContinuesTheStream) {
  Rng a(77);
  a.next_u64();
  Rng b = Rng::from_state(a.save_state());
  for (int i = 0; i < 10; ++i) EXPECT_EQ(a.next_u64(), b.next_u64());
  EXPECT_EQ(a.fork(3).next_u64(), b.fork(3).next_u64());
  EXPECT_THROW(Rng::from_state("not a state"), Error);
}
