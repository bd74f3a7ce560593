// Chapter 12's plan: what the streaming experiment trains and how it reads the streams, checked
// without training anything.
#include <gtest/gtest.h>

#include <set>

#include "ag/error.hpp"
#include "chapters/08-length/length_plan.hpp"
#include "chapters/12-inference/stream_plan.hpp"

namespace pe::ch12 {
namespace {

TEST(Ch12Plan, TrainsEachEncodingWithAndWithoutSinkLogitsOnTheBench) {
  const auto plan = plan_stream_runs("out", 1, 3, 500, "corpus.txt", 70);
  ASSERT_EQ(plan.size(), kEncodings.size() * 2 * 3);
  std::set<std::string> folders;
  for (const StreamRun& r : plan) {
    folders.insert(r.run.out_dir);
    const TrainConfig& c = r.run.config;
    EXPECT_EQ(c.model.sink_logits, r.learned_sinks);
    EXPECT_EQ(c.encoding, r.encoding);
    // everything else is chapter 8's two-layer model on the fortunes, so that the rows compare
    // with chapter 8's tables
    TrainConfig bench = ch08::length_config({r.encoding, r.encoding, 2}, "charlm", 500, c.seed);
    bench.task_options["corpus"] = "corpus.txt";
    bench.model.vocab = 70;
    bench.model.sink_logits = r.learned_sinks;
    EXPECT_EQ(config_to_json(c), config_to_json(bench));
  }
  EXPECT_EQ(folders.size(), plan.size()) << "two runs share a folder";
  EXPECT_EQ(plan.front().run.out_dir, "out/runs/rope-s1");
  EXPECT_EQ(plan[1].run.out_dir, "out/runs/rope-sinks-s1");
}

TEST(Ch12Plan, EveryWindowedReadingHoldsATrainingLengthOfTokens) {
  for (const Reading& r : kReadings) {
    check_window_options(r.window);
    if (r.window.window > 0) {
      EXPECT_EQ(r.window.sinks + r.window.window, kCacheSize) << r.name;
    }
  }
  EXPECT_EQ(kStretches.back().end, kStreamLength);
}

TEST(Ch12Plan, StretchMeanAveragesThePredictionsOfThosePositions) {
  const std::vector<double> bits = {1, 2, 3, 4, 5};  // predictions of positions 1 .. 5
  EXPECT_DOUBLE_EQ(stretch_mean(bits, {1, 3}), 1.5);
  EXPECT_DOUBLE_EQ(stretch_mean(bits, {2, 6}), 3.5);
  EXPECT_THROW(stretch_mean(bits, {0, 3}), ag::Error);  // position 0 is never predicted
  EXPECT_THROW(stretch_mean(bits, {3, 7}), ag::Error);
  EXPECT_THROW(stretch_mean(bits, {3, 3}), ag::Error);
}

TEST(Ch12Plan, SmoothedCurvesAverageWholeWindows) {
  const auto [x, y] = smoothed({1, 3, 5, 7, 9}, 2);
  ASSERT_EQ(y.size(), 2u);  // the last, lone value is dropped
  EXPECT_DOUBLE_EQ(y[0], 2);
  EXPECT_DOUBLE_EQ(y[1], 6);
  EXPECT_DOUBLE_EQ(x[0], 1.5);  // positions 1 and 2
  EXPECT_DOUBLE_EQ(x[1], 3.5);
  EXPECT_THROW(smoothed({1}, 0), ag::Error);
}

}  // namespace
}  // namespace pe::ch12
