// Chapter 8's plan of runs: the head-width rows train the model of their 8-head row with only
// the split of its width changed, each row has a folder of its own, and ALiBi's 2-head row gets
// the slopes of 2 heads.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>

#include "ag/random.hpp"
#include "chapters/01-attention/encoding_registry.hpp"
#include "chapters/08-length/length_plan.hpp"
#include "lab/chapter_registry.hpp"

using namespace pe;
using namespace pe::ch08;

namespace {

class LengthPlan : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { register_chapter_encodings(); }
};

// The full experiment's plan: three seeds from seed 1, 500 steps.
const std::vector<LengthRun>& full_plan() {
  static const std::vector<LengthRun> plan = plan_length_runs("out", 1, 3, 500, "corpus.txt", 97);
  return plan;
}

}  // namespace

TEST_F(LengthPlan, EveryRowTrainsEveryTaskAndSeedInAFolderOfItsOwn) {
  const std::vector<LengthRun>& plan = full_plan();
  const std::size_t rows = kVariants.size() + kHeadWidthVariants.size();
  ASSERT_EQ(plan.size(), rows * kTasks.size() * 3);
  std::set<std::string> folders;
  for (const LengthRun& p : plan) folders.insert(p.run.out_dir);
  EXPECT_EQ(folders.size(), plan.size());
  // The chapter's rows keep the folders of before the head-width rows came (the runs are
  // reused and `pe generate` in the text names one); the others say their heads.
  EXPECT_EQ(plan[7].run.out_dir, "out/runs/shiftk/rope-l2-s1");
  EXPECT_EQ(run_folder("out", "charlm", kHeadWidthVariants[1], 2), "out/runs/charlm/rope-l2-h2-s2");
  // Seed by seed: the first seed's runs all come before the second's.
  EXPECT_EQ(plan[rows * kTasks.size() - 1].run.config.seed, 1u);
  EXPECT_EQ(plan[rows * kTasks.size()].run.config.seed, 2u);
}

TEST_F(LengthPlan, HeadWidthRowsChangeOnlyTheSplitOfTheWidth) {
  const std::vector<LengthRun>& plan = full_plan();
  ASSERT_EQ(kHeadWidthVariants.size(), 3u);
  std::set<std::string> encodings;
  for (const LengthRun& wide : plan) {
    if (wide.variant.heads == kHeads) continue;
    encodings.insert(wide.variant.encoding);
    EXPECT_EQ(wide.run.config.model.heads, 2);
    EXPECT_EQ(wide.run.config.model.width / wide.run.config.model.heads, 32);
    // Its 8-head twin: the same encoding, depth, task and seed.
    int twins = 0;
    for (const LengthRun& narrow : plan) {
      const TrainConfig& a = wide.run.config;
      const TrainConfig& b = narrow.run.config;
      if (narrow.variant.heads != kHeads || b.encoding != a.encoding ||
          b.model.layers != a.model.layers || b.task != a.task || b.seed != a.seed)
        continue;
      ++twins;
      EXPECT_EQ(b.model.heads, 8);
      EXPECT_EQ(b.model.width / b.model.heads, 8);
      TrainConfig same = a;
      same.model.heads = b.model.heads;
      EXPECT_EQ(nlohmann::json(same), nlohmann::json(b)) << wide.run.out_dir;
    }
    EXPECT_EQ(twins, 1) << wide.run.out_dir;
  }
  EXPECT_EQ(encodings, (std::set<std::string>{"sinusoidal", "rope", "alibi"}));
}

TEST_F(LengthPlan, AlibiWithTwoHeadsGetsTheSlopesOfTwoHeads) {
  const std::vector<LengthRun>& plan = full_plan();
  for (const LengthRun& p : plan) {
    if (p.variant.encoding != "alibi" || p.run.config.task != "shiftk" || p.run.config.seed != 1)
      continue;
    EncodingSpec spec;
    spec.model = p.run.config.model;
    spec.max_length = p.run.config.length;
    ag::Rng rng(1);
    const auto encoding = make_encoding("alibi", spec, rng);
    std::vector<double> slopes;
    for (const auto& [name, tensor] : encoding->inspect(4))
      if (name == "slopes") slopes = tensor.to_vector();
    if (p.variant.heads == 2) {
      // Press et al.'s rule for H = 2: 2^(-8/2) and 2^(-8).
      EXPECT_EQ(slopes, (std::vector<double>{1.0 / 16, 1.0 / 256}));
    } else {
      ASSERT_EQ(slopes.size(), 8u);
      EXPECT_EQ(slopes.front(), 0.5);
      EXPECT_EQ(slopes.back(), 1.0 / 256);
    }
  }
}
