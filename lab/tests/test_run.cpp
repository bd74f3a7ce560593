// The run library's measurements of a trained model.
#include <gtest/gtest.h>

#include "lab/run.hpp"
#include "lab/tests/tiny_config.hpp"

using namespace pe;

TEST(Run, MeanAttentionAveragesRowsThatSumToOne) {
  TrainConfig c = tiny();
  c.model.layers = 2;
  c.steps = 3;
  Trainer trainer(c);
  trainer.train();
  const std::int64_t T = 10, sequences = 5;
  const AttentionAverages averages = mean_attention(trainer, T, sequences);
  ASSERT_EQ(averages.by_offset.size(), 2u);
  ASSERT_EQ(averages.by_key.size(), 2u);
  for (const auto* profiles : {&averages.by_offset, &averages.by_key})
    for (const auto& layer : *profiles) {
      ASSERT_EQ(layer.size(), 2u);
      for (const auto& head : layer) {
        ASSERT_EQ(std::int64_t(head.size()), T);
        // Each query's weights sum to 1, so a sequence's weights sum to T; offset r (key j) is
        // the mean over the T - r (T - j) queries that see it.
        double total = 0;
        for (std::int64_t r = 0; r < T; ++r) {
          EXPECT_GE(head[r], 0.0);
          EXPECT_LE(head[r], 1.0);
          total += head[r] * double(T - r);
        }
        EXPECT_NEAR(total, double(T), 1e-4);
      }
    }
  // The weights of query 0 (on key 0, offset 0) are 1, which lifts both means at 0 above 1/T.
  EXPECT_GT(averages.by_key[0][1][0], 1.0 / double(T));
  EXPECT_GT(averages.by_offset[1][0][0], 1.0 / double(T));
  EXPECT_THROW(mean_attention(trainer, 0, 1), ag::Error);
}
