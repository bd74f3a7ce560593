// The same seed gives the same run on any machine: training with one thread or with several
// must give bitwise the same weights and losses, so that a reader who reruns a chapter on a
// machine with another core count gets the chapter's numbers. A step is a fixed number of
// micro-batches (ag/micro_batches.hpp) whatever the thread count: several threads take whole
// micro-batches, and a batch of one sequence is one micro-batch whose ops split between the
// threads. Both ways are checked here, for every encoding in the build; CMake runs this suite
// once per SIMD path (PE_SIMD), as it does the kernel tests.
#include <gtest/gtest.h>

#include <cstdio>
#include <stdexcept>
#include <vector>

#include "ag/io.hpp"
#include "ag/micro_batches.hpp"
#include "ag/simd.hpp"
#include "ag/threads.hpp"
#include "lab/chapter_registry.hpp"
#include "lab/tests/tiny_config.hpp"

namespace {

struct TrainedRun {
  std::vector<double> losses;
  ag::NamedTensors weights;
};

TrainedRun train_with_threads(const pe::TrainConfig& c, int threads) {
  const int before = ag::max_threads();
  ag::set_max_threads(threads);
  pe::Trainer trainer(c);
  TrainedRun run;
  for (int i = 0; i < c.steps; ++i) run.losses.push_back(trainer.step());
  ag::set_max_threads(before);
  run.weights = trainer.model().named_parameters();
  return run;
}

void expect_same_at_one_two_and_three_threads(const pe::TrainConfig& c) {
  const TrainedRun one = train_with_threads(c, 1);
  for (int threads : {2, 3}) {
    const TrainedRun other = train_with_threads(c, threads);
    EXPECT_EQ(one.losses, other.losses) << c.encoding << ", " << threads << " threads";
    ASSERT_EQ(one.weights.size(), other.weights.size());
    for (std::size_t i = 0; i < one.weights.size(); ++i)
      EXPECT_EQ(one.weights[i].second.to_vector(), other.weights[i].second.to_vector())
          << c.encoding << ": " << one.weights[i].first << " differs between 1 and " << threads
          << " threads";
  }
}

// 32 sequences of 32: four micro-batches, so that 2 and 3 threads each take whole ones.
pe::TrainConfig micro_batched(const std::string& encoding) {
  pe::TrainConfig c = pe::tiny();
  c.encoding = encoding;
  c.batch = 32;
  c.length = 32;
  c.steps = 2;
  return c;
}

// The path PE_SIMD asks for, or a skip when this CPU cannot run it.
#define SKIP_UNLESS_THE_SIMD_PATH_RUNS()                   \
  do {                                                     \
    try {                                                  \
      std::printf("SIMD path %s\n", ag::simd_path_name()); \
    } catch (const std::runtime_error& e) {                \
      GTEST_SKIP() << e.what();                            \
    }                                                      \
  } while (false)

}  // namespace

TEST(Threads, EveryEncodingTrainsBitwiseTheSameOverMicroBatches) {
  SKIP_UNLESS_THE_SIMD_PATH_RUNS();
  pe::register_chapter_encodings();
  const pe::TrainConfig first = micro_batched("none");
  ASSERT_EQ(ag::micro_batch_count(first.batch, first.length), ag::kMaxMicroBatches);
  for (const auto& entry : pe::registered_encodings())
    expect_same_at_one_two_and_three_threads(micro_batched(entry.name));
}

// Big enough that every op's own parallel path is taken: a Linear of 1024 rows x 64 x 64 passes
// the matmul's row split, and layer norm over 1024 x 64 its parallel backward.
TEST(Threads, OneLongSequenceSplitsItsOpsBitwiseTheSame) {
  SKIP_UNLESS_THE_SIMD_PATH_RUNS();
  pe::TrainConfig c = pe::tiny();
  c.model.width = 64;
  c.model.ffn_width = 256;
  c.batch = 1;
  c.length = 1024;
  c.steps = 2;
  ASSERT_EQ(ag::micro_batch_count(c.batch, c.length), 1);
  expect_same_at_one_two_and_three_threads(c);
}
