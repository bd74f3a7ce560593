// The same seed gives the same run on any machine: training with one thread or with several
// must give bitwise the same weights and losses, so that a reader who reruns a chapter on a
// machine with another core count gets the chapter's numbers.
#include <gtest/gtest.h>

#include <vector>

#include "ag/io.hpp"
#include "ag/threads.hpp"
#include "lab/tests/tiny_config.hpp"

namespace {

struct TrainedRun {
  std::vector<double> losses;
  ag::NamedTensors weights;
};

// Big enough that every parallel path is taken: a Linear of 1024 rows x 64 x 64 passes the
// matmul's row split, and layer norm over 1024 x 64 its parallel backward (4 blocks of rows).
TrainedRun train_with_threads(int threads) {
  pe::TrainConfig c = pe::tiny();
  c.model.width = 64;
  c.model.ffn_width = 256;
  c.batch = 32;
  c.length = 32;
  c.steps = 3;
  const int before = ag::max_threads();
  ag::set_max_threads(threads);
  pe::Trainer trainer(c);
  TrainedRun run;
  for (int i = 0; i < c.steps; ++i) run.losses.push_back(trainer.step());
  ag::set_max_threads(before);
  run.weights = trainer.model().named_parameters();
  return run;
}

}  // namespace

TEST(Threads, OneThreadAndSeveralTrainBitwiseTheSame) {
  const TrainedRun one = train_with_threads(1), three = train_with_threads(3);
  EXPECT_EQ(one.losses, three.losses);
  ASSERT_EQ(one.weights.size(), three.weights.size());
  for (std::size_t i = 0; i < one.weights.size(); ++i)
    EXPECT_EQ(one.weights[i].second.to_vector(), three.weights[i].second.to_vector())
        << one.weights[i].first << " differs between 1 and 3 threads";
}
