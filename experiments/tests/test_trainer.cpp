// The trainer: it learns, it resumes exactly, and it rejects bad configurations.
#include <gtest/gtest.h>

#include "ag/io.hpp"
#include "tiny_config.hpp"
#include "trainer.hpp"

using namespace pe;


TEST(Trainer, LossFallsOnAlternatingChar) {
  TrainConfig c = tiny("alternating");
  c.steps = 60;
  Trainer trainer(c);
  const double before = trainer.evaluate(c.length, 32).loss;
  trainer.train();
  const double after = trainer.evaluate(c.length, 32).loss;
  EXPECT_LT(after, before * 0.7) << "before " << before << " after " << after;
  ASSERT_EQ(trainer.history().size(), 3u);
  EXPECT_EQ(trainer.history().back().step, 60);
}

TEST(Trainer, SameSeedSameRun) {
  Trainer a(tiny()), b(tiny());
  for (int i = 0; i < 5; ++i) EXPECT_EQ(a.step(), b.step());
}

TEST(Trainer, ResumingGivesTheSameContinuation) {
  const std::string path = ::testing::TempDir() + "trainer.ckpt";
  Trainer straight(tiny());
  for (int i = 0; i < 6; ++i) straight.step();
  straight.save(path);
  std::vector<double> expected;
  for (int i = 0; i < 6; ++i) expected.push_back(straight.step());

  auto resumed = Trainer::resume(path);
  EXPECT_EQ(resumed->steps_done(), 6);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(resumed->step(), expected[i]) << "step " << 7 + i;
  EXPECT_EQ(resumed->model().parameters()[0].to_vector(),
            straight.model().parameters()[0].to_vector());
}

TEST(Trainer, LearningRateWarmsUpThenDecaysToATenth) {
  TrainConfig c = tiny();
  c.steps = 100;
  c.warmup = 10;
  c.lr = 1.0;
  Trainer trainer(c);
  EXPECT_DOUBLE_EQ(trainer.learning_rate(0), 0.1);
  EXPECT_DOUBLE_EQ(trainer.learning_rate(9), 1.0);
  EXPECT_DOUBLE_EQ(trainer.learning_rate(10), 1.0);
  EXPECT_NEAR(trainer.learning_rate(100), 0.1, 1e-12);
  EXPECT_LT(trainer.learning_rate(60), trainer.learning_rate(30));
}

TEST(Trainer, EvaluationIsDeterministicAndWorksAtOtherLengths) {
  Trainer trainer(tiny());
  const Evaluation a = trainer.evaluate(12, 40), b = trainer.evaluate(12, 40);
  EXPECT_EQ(a.accuracy, b.accuracy);
  EXPECT_EQ(a.scored, 40 * (12 - 4));
  EXPECT_EQ(trainer.evaluate(20, 8).scored, 8 * (20 - 4));
}

TEST(Trainer, ConfigJsonRoundTripAndErrors) {
  TrainConfig c = tiny();
  c.task_options["k"] = "3";
  const TrainConfig back = config_from_json(config_to_json(c));
  EXPECT_EQ(config_to_json(back), config_to_json(c));
  EXPECT_THROW(config_from_json("{\"stpes\": 3}"), ag::Error);
  EXPECT_THROW(config_from_json("{\"steps\": \"many\"}"), ag::Error);
  EXPECT_THROW(config_from_json("not json"), ag::Error);
}

TEST(Trainer, BadConfigurationsAreErrors) {
  TrainConfig c = tiny();
  c.model.heads = 3;  // 32 is not divisible by 3
  EXPECT_THROW(Trainer{c}, ag::Error);
  c = tiny();
  c.lr = 0;
  EXPECT_THROW(Trainer{c}, ag::Error);
  c = tiny();
  c.encoding = "nonsense";
  EXPECT_THROW(Trainer{c}, ag::Error);
  c = tiny();
  c.task = "nonsense";
  EXPECT_THROW(Trainer{c}, ag::Error);
}

TEST(Trainer, ResumingFromABadFileIsAnError) {
  EXPECT_THROW(Trainer::resume("/nonexistent/run.ckpt"), ag::Error);
  const std::string path = ::testing::TempDir() + "plain.agt";
  ag::save_tensors(path, {{"x", ag::ones({1})}});
  EXPECT_THROW(Trainer::resume(path), ag::Error);
}
