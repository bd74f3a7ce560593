// Chapter 9's encodings through the lab, as `pe train` runs them: a few steps of training, a
// checkpoint written and resumed, and an evaluation at four times the training length.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <string>

#include "lab/chapter_registry.hpp"
#include "lab/trainer.hpp"

using namespace pe;

namespace {

class Ch09Lab : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { register_chapter_encodings(); }
};

// A 2-layer, 2-head model of width 16 trained 3 steps at length 8: weights to save and
// evaluate, not a good model.
TrainConfig tiny(const std::string& encoding, std::map<std::string, std::string> options) {
  TrainConfig c;
  c.task = "shiftk";
  c.encoding = encoding;
  c.encoding_options = std::move(options);
  c.model.width = 16;
  c.model.heads = 2;
  c.model.layers = 2;
  c.model.ffn_width = 32;
  c.length = 8;
  c.batch = 4;
  c.steps = 3;
  c.warmup = 1;
  c.eval_every = 3;
  c.eval_sequences = 4;
  return c;
}

}  // namespace

TEST_F(Ch09Lab, EachEncodingTrainsResumesAndRunsPastItsTrainingLength) {
  const std::vector<std::pair<std::string, std::map<std::string, std::string>>> variants = {
      {"kerple", {}}, {"kerple", {{"form", "power"}, {"shared", "false"}}},
      {"fire", {}},   {"fire", {{"shared", "true"}, {"transform", "none"}}},
      {"dpb", {}},    {"dpb", {{"shared", "false"}, {"log_distance", "true"}}},
      {"xpos", {}}};
  const auto checkpoint = std::filesystem::temp_directory_path() /
                          ("pe_ch09_lab_" + std::to_string(::getpid()) + ".agt");
  for (const auto& [encoding, options] : variants) {
    Trainer trained(tiny(encoding, options));
    trained.train();
    ASSERT_EQ(trained.steps_done(), 3) << encoding;
    trained.save(checkpoint.string());
    const auto resumed = Trainer::resume(checkpoint.string());
    // the same parameters, per layer or shared, under the same names: the same numbers
    const Evaluation before = trained.evaluate(32, 4), after = resumed->evaluate(32, 4);
    EXPECT_EQ(after.loss, before.loss) << encoding;
    EXPECT_TRUE(std::isfinite(before.loss)) << encoding << " at 4x the training length";
    EXPECT_GT(before.scored, 0) << encoding;
  }
  std::filesystem::remove(checkpoint);
}
