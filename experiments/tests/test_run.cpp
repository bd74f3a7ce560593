// The run library's measurements of a trained model.
#include <gtest/gtest.h>

#include "run.hpp"
#include "tiny_config.hpp"

using namespace pe;

TEST(Run, MeanAttentionAveragesRowsThatSumToOne) {
  TrainConfig c = tiny();
  c.model.layers = 2;
  c.steps = 3;
  Trainer trainer(c);
  trainer.train();
  const std::int64_t T = 10, sequences = 5;
  for (auto axis : {AttentionAxis::offset, AttentionAxis::key})
  for (const auto& layer : mean_attention(trainer, T, sequences, axis)) {
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
  ASSERT_EQ(mean_attention(trainer, T, sequences, AttentionAxis::key).size(), 2u);
  // Only query T-1 sees key T-1 (and offset T-1), so those entries are its weights alone; and
  // the weights of query 0 (on key 0, offset 0) are 1, which lifts both means at 0 above 1/T.
  const auto by_key = mean_attention(trainer, T, sequences, AttentionAxis::key);
  const auto by_offset = mean_attention(trainer, T, sequences, AttentionAxis::offset);
  EXPECT_GT(by_key[0][1][0], 1.0 / double(T));
  EXPECT_GT(by_offset[1][0][0], 1.0 / double(T));
  EXPECT_THROW(mean_attention(trainer, 0, 1, AttentionAxis::offset), ag::Error);
}
