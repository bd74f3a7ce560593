// The memory estimate of chapter 9's MLPs of the distance (memory.hpp): FIRE evaluates its MLP
// at every (query, key), so its activations grow as T^2 times the MLP's width in every layer;
// the dynamic position bias evaluates its MLP once per distance (T times width times depth)
// and gathers an [H, T, T] bias. The figures are rough, but they must grow with what costs.
#include <gtest/gtest.h>

#include "lab/memory.hpp"
#include "lab/tests/tiny_config.hpp"

namespace {

pe::TrainConfig at_length(const std::string& encoding, std::int64_t length) {
  pe::TrainConfig c = pe::tiny();
  c.encoding = encoding;
  c.length = length;
  return c;
}

constexpr double kFloat = 4, kWithGradient = 2;

}  // namespace

TEST(Memory, FireCountsItsMlpAtEveryQueryAndKey) {
  const double T = 1024;
  const double none = pe::estimated_bytes(at_length("none", 1024), 30);
  pe::TrainConfig c = at_length("fire", 1024);
  const double fire = pe::estimated_bytes(c, 30);
  // at least the hidden layer: [T * T, 32], kept with its gradient, in one layer
  EXPECT_GT(fire, none + kWithGradient * kFloat * T * T * 32);
  c.encoding_options["width"] = "64";  // twice the hidden units: T * T * 32 more per tensor
  EXPECT_GT(pe::estimated_bytes(c, 30), fire + kWithGradient * kFloat * T * T * 32);
  c.model.layers = 2;  // one MLP run per layer, shared or not
  c.encoding_options["shared"] = "true";
  EXPECT_GT(pe::estimated_bytes(c, 30), 1.9 * fire);
  c = at_length("fire", 1024);
  c.encoding_options["width"] = "wide";  // the encoding refuses it; the estimate takes 32
  EXPECT_EQ(pe::estimated_bytes(c, 30), fire);
  // Evaluating at 100,000 tokens: [T * T, 32] of hidden units more, over a terabyte.
  EXPECT_GT(pe::estimated_bytes(at_length("fire", 32), 30, 100000),
            pe::estimated_bytes(at_length("none", 32), 30, 100000) + kFloat * 1e10 * 32);
}

TEST(Memory, DynamicBiasCountsItsMlpPerDistanceAndItsGatheredBias) {
  const double T = 1024, H = 2;
  const double none = pe::estimated_bytes(at_length("none", 1024), 30);
  pe::TrainConfig c = at_length("dpb", 1024);
  const double dpb = pe::estimated_bytes(c, 30);
  EXPECT_GT(dpb, none + kWithGradient * kFloat * 2 * H * T * T);  // the gathered [T, T, H]
  // Its MLP runs on the T distances, not on the T^2 pairs: far less than FIRE's.
  EXPECT_LT(dpb, pe::estimated_bytes(at_length("fire", 1024), 30));
  c.encoding_options["depth"] = "10";  // eight hidden layers more of [T, C / 4 = 8], three each
  EXPECT_GT(pe::estimated_bytes(c, 30), dpb + kWithGradient * kFloat * 7 * 3 * T * 8);
  c.encoding_options["width"] = "1000";
  EXPECT_GT(pe::estimated_bytes(c, 30), dpb + kWithGradient * kFloat * 10 * 3 * T * 990);
}
