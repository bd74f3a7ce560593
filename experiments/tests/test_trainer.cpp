// The trainer: it learns, it resumes exactly, and it rejects bad configurations.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

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
  TrainConfig c;  // every field away from its default
  c.task = "alternating";
  c.task_options["k"] = "3";
  c.encoding = "none";
  c.encoding_options["x"] = "1";
  c.model = {7, 48, 3, 2, 96, false};
  c.length = 12;
  c.batch = 5;
  c.steps = 9;
  c.warmup = 2;
  c.lr = 0.5;
  c.weight_decay = 0.25;
  c.clip = 3;
  c.seed = 11;
  c.eval_every = 4;
  c.eval_sequences = 6;
  c.max_length = 40;
  const TrainConfig back = config_from_json(config_to_json(c));
  EXPECT_EQ(back.task, c.task);
  EXPECT_EQ(back.task_options, c.task_options);
  EXPECT_EQ(back.encoding, c.encoding);
  EXPECT_EQ(back.encoding_options, c.encoding_options);
  EXPECT_EQ(back.model.vocab, 7);
  EXPECT_EQ(back.model.width, 48);
  EXPECT_EQ(back.model.heads, 3);
  EXPECT_EQ(back.model.layers, 2);
  EXPECT_EQ(back.model.ffn_width, 96);
  EXPECT_FALSE(back.model.causal);
  EXPECT_EQ(back.length, 12);
  EXPECT_EQ(back.batch, 5);
  EXPECT_EQ(back.steps, 9);
  EXPECT_EQ(back.warmup, 2);
  EXPECT_EQ(back.lr, 0.5);
  EXPECT_EQ(back.weight_decay, 0.25);
  EXPECT_EQ(back.clip, 3);
  EXPECT_EQ(back.seed, 11u);
  EXPECT_EQ(back.eval_every, 4);
  EXPECT_EQ(back.eval_sequences, 6);
  EXPECT_EQ(back.max_length, 40);
  // The keys of every run.json and checkpoint written so far: flat, the model's fields at the
  // top level. Changing them would make those files unreadable.
  const nlohmann::json written = c;
  std::vector<std::string> keys;
  for (const auto& [key, value] : written.items()) keys.push_back(key);
  EXPECT_EQ(keys, (std::vector<std::string>{
                      "batch", "causal", "clip", "encoding", "encoding_options", "eval_every",
                      "eval_sequences", "ffn_width", "heads", "layers", "length", "lr",
                      "max_length", "seed", "steps", "task", "task_options", "vocab", "warmup",
                      "weight_decay", "width"}));
  // A missing key keeps its default.
  EXPECT_EQ(config_from_json("{\"steps\": 3}").model.width, TrainConfig{}.model.width);
  EXPECT_THROW(config_from_json("{\"heads\": 0}"), ag::Error);  // read, then validated
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
