// Chapter 9's plan of runs on chapter 8's bench, and the bias curves its figures read: chapter
// 8's rows train exactly chapter 8's configuration (so the two chapters' numbers compare), every
// run has a folder of its own, and the curve of ALiBi read through its hook is its formula.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>

#include "chapters/06-alibi/alibi.hpp"
#include "chapters/08-length/length_plan.hpp"
#include "chapters/09-learned-distance/decay_curves.hpp"
#include "chapters/09-learned-distance/distance_plan.hpp"
#include "lab/chapter_registry.hpp"

using namespace pe;
using namespace pe::ch09;

namespace {

class DistancePlan : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { register_chapter_encodings(); }
};

const std::vector<DistanceRun>& full_plan() {
  static const std::vector<DistanceRun> plan =
      plan_distance_runs("out", 1, 3, 500, "corpus.txt", 97);
  return plan;
}

}  // namespace

TEST_F(DistancePlan, EveryRowTrainsEveryTaskAndSeedInAFolderOfItsOwn) {
  const std::vector<DistanceRun>& plan = full_plan();
  ASSERT_EQ(plan.size(), kRows.size() * ch08::kTasks.size() * 3);
  std::set<std::string> folders, names;
  for (const DistanceRun& p : plan) {
    folders.insert(p.run.out_dir);
    if (p.run.config.task != "charlm") {  // (charlm reads its corpus, which is not here)
      EXPECT_NO_THROW(check_trainable(p.run.config)) << p.run.out_dir;
    }
  }
  EXPECT_EQ(folders.size(), plan.size());
  for (const Row& row : kRows) names.insert(row.name);
  EXPECT_EQ(names.size(), kRows.size());
  EXPECT_EQ(run_name({"k", "kerple", {{"form", "power"}}, 0, false}), "kerple-form=power");
  // seed by seed, as chapter 8's plan
  EXPECT_EQ(plan[kRows.size() * ch08::kTasks.size() - 1].run.config.seed, 1u);
  EXPECT_EQ(plan[kRows.size() * ch08::kTasks.size()].run.config.seed, 2u);
}

TEST_F(DistancePlan, ChapterEightsRowsTrainChapterEightsConfiguration) {
  for (const Row& row : kRows) {
    if (!row.from_chapter_8) continue;
    const auto same =
        std::find_if(ch08::kVariants.begin(), ch08::kVariants.end(),
                     [&](const ch08::Variant& v) { return v.encoding == row.encoding; });
    ASSERT_NE(same, ch08::kVariants.end()) << row.name;
    for (const std::string& task : ch08::kTasks) {
      const TrainConfig ours = distance_config(row, task, 500, 2);
      const TrainConfig theirs = ch08::length_config(*same, task, 500, 2);
      EXPECT_EQ(nlohmann::json(ours), nlohmann::json(theirs)) << row.name << " " << task;
    }
  }
}

TEST_F(DistancePlan, AlibisCurveReadThroughItsHookIsMinusSlopeTimesDistance) {
  const auto alibi = std::find_if(kRows.begin(), kRows.end(),
                                  [](const Row& row) { return row.encoding == "alibi"; });
  ASSERT_NE(alibi, kRows.end());
  TrainConfig c = distance_config(*alibi, "shiftk", 10, 1);
  c.max_length = 64;
  Trainer model(c);
  const std::vector<double> slopes = alibi_slopes(c.model.heads);
  for (std::int64_t layer : {0, 1}) {
    const auto curves = bias_against_distance(model.model(), layer, 64);
    ASSERT_EQ(curves.size(), slopes.size());
    for (std::size_t h = 0; h < slopes.size(); ++h)
      for (std::size_t d = 0; d < 64; ++d)
        EXPECT_NEAR(curves[h][d], -slopes[h] * double(d), 1e-5 * (1 + double(d))) << h << " " << d;
  }
  EXPECT_THROW(bias_against_distance(model.model(), 2, 64), ag::Error);
  EXPECT_THROW(bias_against_distance(model.model(), 0, 0), ag::Error);
}
