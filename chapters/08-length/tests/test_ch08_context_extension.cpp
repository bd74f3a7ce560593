// Chapter 8: a trained RoPE model under a scaling rule keeps its weights; the rule alone
// changes what it computes.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "ag/error.hpp"
#include "chapters/08-length/context_extension.hpp"
#include "chapters/08-length/tests/tiny_length_config.hpp"
#include "lab/chapter_registry.hpp"

using namespace pe;

namespace {

TrainConfig tiny_rope() { return tiny_length_config("rope"); }

std::vector<double> logits_at(Trainer& trainer, std::int64_t length) {
  ag::NoGradGuard no_grad;
  const Batch batch = trainer.task().held_out(2, length, 7);
  return trainer.model().forward(batch.inputs).to_vector();
}

class ContextExtension : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { register_chapter_encodings(); }
};

}  // namespace

TEST_F(ContextExtension, OptionsNameOnlyWhatTheRuleReads) {
  EXPECT_TRUE(rope_scaling_encoding_options("none", 8, 32).empty());
  using Options = std::map<std::string, std::string>;
  EXPECT_EQ(rope_scaling_encoding_options("linear", 8, 32),
            (Options{{"scaling", "linear"}, {"scale", "8"}}));
  EXPECT_EQ(rope_scaling_encoding_options("ntk", 2.5, 32),
            (Options{{"scaling", "ntk"}, {"scale", "2.5"}}));
  EXPECT_EQ(rope_scaling_encoding_options("dynamic", 8, 32),
            (Options{{"scaling", "dynamic"}, {"train_length", "32"}}));
  EXPECT_EQ(rope_scaling_encoding_options("yarn", 8, 32),
            (Options{{"scaling", "yarn"}, {"scale", "8"}, {"train_length", "32"}}));
  EXPECT_EQ(rope_scaling_encoding_options("yarn-paper", 8, 32),
            (Options{{"scaling", "yarn-paper"}, {"scale", "8"}, {"train_length", "32"}}));
  EXPECT_THROW(rope_scaling_encoding_options("longrope", 8, 32), ag::Error);
}

// Every rule through attention, YaRN's temperature too: grades 8.2, not 8.1.
// grades: task 8.2
TEST_F(ContextExtension, SameWeightsGiveTheSameLogitsAndAScalingRuleChangesThem) {
  Trainer trained(tiny_rope());
  trained.train();
  const std::string checkpoint = (std::filesystem::temp_directory_path() /
                                  ("pe_ch08_rope_" + std::to_string(::getpid()) + ".agt"))
                                     .string();
  trained.save(checkpoint);
  auto copy = trainer_from_checkpoint(tiny_rope(), checkpoint);
  EXPECT_EQ(logits_at(*copy, 16), logits_at(trained, 16));  // bit for bit

  for (const std::string method : {"linear", "ntk", "dynamic", "yarn", "yarn-paper"}) {
    TrainConfig c = tiny_rope();
    c.encoding_options = rope_scaling_encoding_options(method, 4, 8);
    auto scaled = trainer_from_checkpoint(c, checkpoint);
    // At 2x the training length every rule moves some frequency (dynamic: s = 16 / 8 = 2).
    EXPECT_NE(logits_at(*scaled, 16), logits_at(trained, 16)) << method;
  }
  // Dynamic scaling is plain RoPE up to the training length.
  TrainConfig dynamic = tiny_rope();
  dynamic.encoding_options = rope_scaling_encoding_options("dynamic", 4, 8);
  const auto plain = logits_at(trained, 8);
  const auto same = logits_at(*trainer_from_checkpoint(dynamic, checkpoint), 8);
  ASSERT_EQ(plain.size(), same.size());
  for (std::size_t i = 0; i < plain.size(); ++i) EXPECT_NEAR(same[i], plain[i], 1e-5) << i;
  std::filesystem::remove(checkpoint);
}
