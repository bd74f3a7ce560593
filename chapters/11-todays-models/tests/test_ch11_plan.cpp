// Chapter 11's plan of runs on chapter 8's bench: every row trains every task and seed in a
// folder of its own, with chapter 8's model and its own options, and every row's encoding
// builds; the stretch rules' options are what chapter 8 and Hugging Face read; longrope's
// search space is every non-decreasing choice of factors.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <set>

#include "chapters/08-length/length_plan.hpp"
#include "chapters/11-todays-models/todays_plan.hpp"
#include "lab/chapter_registry.hpp"

using namespace pe;
using namespace pe::ch11;

namespace {

class TodaysPlan : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { register_chapter_encodings(); }
};

}  // namespace

TEST_F(TodaysPlan, EveryRowTrainsEveryTaskAndSeedInAFolderOfItsOwn) {
  const std::vector<TodaysRun> plan = plan_todays_runs("out", 1, 3, 500, "corpus.txt", 97);
  ASSERT_EQ(plan.size(), kRows.size() * ch08::kTasks.size() * 3);
  std::set<std::string> folders;
  for (const TodaysRun& p : plan) {
    folders.insert(p.run.out_dir);
    const TrainConfig& c = p.run.config;
    EXPECT_EQ(c.model.layers, 2) << p.run.out_dir;
    EXPECT_EQ(c.model.heads, ch08::kHeads) << p.run.out_dir;
    EXPECT_EQ(c.length, ch08::kTrainLength) << p.run.out_dir;
    EXPECT_EQ(c.encoding_options, p.row.options) << p.run.out_dir;
    if (c.task == "charlm") {
      EXPECT_EQ(c.task_options.at("corpus"), "corpus.txt");
      EXPECT_EQ(c.model.vocab, 97);
    } else {
      EXPECT_NO_THROW(check_trainable(c)) << p.run.out_dir;
    }
  }
  EXPECT_EQ(folders.size(), plan.size());
}

TEST_F(TodaysPlan, RowNamesAreUniqueAndEveryRowsEncodingBuilds) {
  std::set<std::string> names;
  for (const Row& row : kRows) {
    EXPECT_TRUE(names.insert(row.name).second) << row.name;
    const TrainConfig c = todays_config(row, "shiftk", 1, 1);
    EncodingSpec spec{c.model, 512, c.encoding_options};
    ag::Rng rng(1);
    EXPECT_NO_THROW(make_encoding(row.encoding, spec, rng)) << row.name;
  }
}

TEST_F(TodaysPlan, StretchOptionsAreReadByRope) {
  const TrainConfig rope = todays_config({"rope", "rope"}, "shiftk", 1, 1);
  for (const std::string& rule : kStretchRules) {
    const auto options = stretch_options(rule, kStretch, ch08::kTrainLength, {1, 2, 4, 8});
    EncodingSpec spec{rope.model, 512, options};
    ag::Rng rng(1);
    EXPECT_NO_THROW(make_encoding("rope", spec, rng)) << rule;
    if (rule == "none") {
      EXPECT_TRUE(options.empty());
    }
  }
  const auto llama3 = stretch_options("llama3", 16, 32);
  EXPECT_EQ(llama3.at("factor"), "16");
  EXPECT_EQ(llama3.at("original_max_position_embeddings"), "32");
  const auto longrope = stretch_options("longrope", 16, 32, {1, 2.5, 16, 32});
  EXPECT_EQ(longrope.at("long_factor"), "1,2.5,16,32");
  EXPECT_EQ(longrope.at("short_factor"), "1,1,1,1");
  EXPECT_THROW(stretch_options("longrope", 16, 32), ag::Error);
  EXPECT_THROW(stretch_options("su", 16, 32), ag::Error);
}

TEST_F(TodaysPlan, LongropesSearchSpaceIsEveryNonDecreasingChoice) {
  const auto space = longrope_search_space({1, 2, 4}, 2);
  const std::vector<std::vector<double>> expected = {{1, 1}, {1, 2}, {1, 4},
                                                     {2, 2}, {2, 4}, {4, 4}};
  EXPECT_EQ(space, expected);
  // C(6 + 4 - 1, 4) = 126 choices of 4 planes' factors from kLongropeCandidates
  const auto full = longrope_search_space(kLongropeCandidates, 4);
  EXPECT_EQ(full.size(), 126u);
  for (const auto& factors : full) EXPECT_TRUE(std::is_sorted(factors.begin(), factors.end()));
}
