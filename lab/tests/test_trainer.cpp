// The trainer: it learns, it resumes exactly, and it rejects bad configurations.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <nlohmann/json.hpp>

#include "ag/io.hpp"
#include "lab/memory.hpp"
#include "lab/tests/tiny_config.hpp"
#include "lab/trainer.hpp"

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

// The live pages train in slices (train_until) so that the page can redraw between them.
TEST(Trainer, TrainingInSlicesGivesTheSameRun) {
  TrainConfig c = tiny("alternating");
  c.steps = 25;
  c.eval_every = 10;
  Trainer whole(c), sliced(c);
  whole.train();
  for (std::int64_t until : {3, 10, 11, 24, 40}) sliced.train_until(until);
  ASSERT_EQ(sliced.steps_done(), 25);
  ASSERT_EQ(sliced.history().size(), whole.history().size());
  for (std::size_t i = 0; i < whole.history().size(); ++i) {
    EXPECT_EQ(sliced.history()[i].step, whole.history()[i].step);
    EXPECT_EQ(sliced.history()[i].train_loss, whole.history()[i].train_loss);
    EXPECT_EQ(sliced.history()[i].eval_loss, whole.history()[i].eval_loss);
  }
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
  EXPECT_EQ(
      keys,
      (std::vector<std::string>{
          "batch",          "causal",       "clip",  "encoding", "encoding_options", "eval_every",
          "eval_sequences", "ffn_width",    "heads", "layers",   "length",           "lr",
          "max_length",     "seed",         "steps", "task",     "task_options",     "vocab",
          "warmup",         "weight_decay", "width"}));
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

namespace {

// The error message of f(), or "" when it does not throw ag::Error.
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const ag::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

// The checksum protects against damage, not against a crafted file: save_tensors recomputes it,
// so each case below is a file that passes the checksum and must be refused by the metadata
// checks, in one line, never a crash or an out-of-bounds read.
TEST(Trainer, CraftedCheckpointMetadataIsRefusedInOneLine) {
  TrainConfig c = tiny();
  c.steps = 4;
  c.eval_every = 2;
  Trainer trainer(c);
  trainer.train();
  const std::string good = ::testing::TempDir() + "crafted_good.agt";
  trainer.save(good);
  const ag::TensorFile file = ag::load_tensor_file(good);
  ASSERT_NO_THROW(read_saved_progress(file.metadata, good));

  nlohmann::json config = nlohmann::json::parse(file.metadata.at("config"));
  auto config_with = [&](const char* key, const nlohmann::json& value) {
    nlohmann::json changed = config;
    changed[key] = value;
    return changed.dump();
  };
  const struct {
    const char* key;
    std::string value;
    const char* error;
  } cases[] = {
      {"history", "[[]]", "history entry 0 is not a list of 6 numbers"},
      {"history", "[[1]]", "history entry 0 is not a list of 6 numbers"},
      {"history", "[[2, 1, 1, 1, 1, 1, 7]]", "not a list of 6 numbers"},
      {"history", "[[2, 1, 1, 1, 1, \"x\"]]", "not a finite number"},
      {"history", "[[2, null, 1, 1, 1, 1]]", "not a finite number"},
      {"history", "[[2.5, 1, 1, 1, 1, 1]]", "step that is not a whole number"},
      {"history", "[[9, 1, 1, 1, 1, 1]]", "has step 9"},
      {"history", "[[2, 1, 1, 1, 1, 1], [2, 1, 1, 1, 1, 1]]", "history entry 1 has step 2"},
      {"history", "{\"a\": 1}", "history is not a list"},
      {"history", "[[", "history is not valid JSON"},
      {"steps_done", "7x", "steps_done must be a whole number, got '7x'"},
      {"steps_done", "1e5", "steps_done must be a whole number, got '1e5'"},
      {"steps_done", "", "steps_done must be a whole number"},
      {"steps_done", "5", "steps_done 5 is outside 0 .. 4"},
      {"steps_done", "-1", "steps_done -1 is outside"},
      {"optimizer_steps", "3", "optimizer_steps 3 differs from steps_done 4"},
      {"seconds", "nan", "seconds must be a finite number"},
      {"seconds", "1e999", "seconds must be a finite number"},
      {"config", config_with("layers", 1000000), "layers must be from 1 to 64"},
      {"config", config_with("seed", -5), "seed must be a whole number, not negative"},
      {"config", config_with("steps", 4.5), "steps must be a whole number"},
      {"config", config_with("lr", "fast"), "wrong type"},
      {"config", config_with("causal", 1), "causal must be true or false"},
  };
  for (const auto& bad : cases) {
    ag::Metadata metadata = file.metadata;
    metadata[bad.key] = bad.value;
    const std::string path = ::testing::TempDir() + "crafted.agt";
    ag::save_tensors(path, file.tensors, metadata);
    const std::string message = error_of([&] { Trainer::resume(path); });
    EXPECT_NE(message.find(bad.error), std::string::npos)
        << bad.key << "=" << bad.value << ": " << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

TEST(Trainer, NonFiniteAndHugeSettingsAreRefusedBeforeTraining) {
  const struct {
    void (*change)(TrainConfig&);
    const char* error;
  } cases[] = {
      {[](TrainConfig& c) { c.lr = std::numeric_limits<double>::infinity(); },
       "lr must be a finite"},
      {[](TrainConfig& c) { c.lr = std::nan(""); }, "lr must be a finite"},
      {[](TrainConfig& c) { c.clip = std::numeric_limits<double>::infinity(); },
       "clip must be a finite"},
      {[](TrainConfig& c) { c.weight_decay = std::numeric_limits<double>::infinity(); },
       "weight_decay must be a finite"},
      {[](TrainConfig& c) { c.steps = std::numeric_limits<std::int64_t>::max(); },
       "steps must be from 0 to"},
      {[](TrainConfig& c) { c.warmup = -1; }, "warmup must be from 0 to"},
      {[](TrainConfig& c) { c.max_length = 1000000; }, "max_length must be from 0 to"},
  };
  for (const auto& bad : cases) {
    TrainConfig c = tiny();
    bad.change(c);
    const std::string message = error_of([&] { Trainer trainer(c); });
    EXPECT_NE(message.find(bad.error), std::string::npos) << message;
  }
}

// The figure is a rough one, but it must grow with what costs memory and refuse past the limit.
TEST(Trainer, MemoryEstimateRefusesWhatCannotFit) {
  TrainConfig c = tiny();
  const double small = estimated_bytes(c, 30);
  EXPECT_GT(small, 0);
  c.length = 24;
  EXPECT_GT(estimated_bytes(c, 30), small);
  c = tiny();
  c.encoding = "shaw";
  c.length = 4096;
  const double lean_shaw = estimated_bytes(c, 30);
  EXPECT_GT(lean_shaw, 1e9);                // the scores of 16 sequences in 2 heads: gigabytes
  c.encoding_options["pairwise"] = "true";  // and two [T, T, D] tensors per layer more
  EXPECT_GT(estimated_bytes(c, 30), lean_shaw + 2 * 4096.0 * 4096 * 16 * 4);
  EXPECT_GT(estimated_bytes(tiny(), 30, 100000), 1e11);  // evaluating at 100000 tokens

  ::setenv("PE_MEMORY_LIMIT_BYTES", "1000", 1);
  const std::string message = error_of([] { Trainer trainer(tiny()); });
  ::unsetenv("PE_MEMORY_LIMIT_BYTES");
  EXPECT_NE(message.find("memory: training this configuration needs about"), std::string::npos)
      << message;
  EXPECT_NO_THROW(Trainer trainer(tiny()));
}

// The memory figure says where it came from, and a limit that is not a whole number of bytes
// is an error naming the variable, never a silent 0 (which would switch the check off).
TEST(Trainer, MemoryLimitFromTheEnvironmentIsCheckedAndNamed) {
  ::setenv("PE_MEMORY_LIMIT_BYTES", "1000", 1);
  const AvailableMemory limit = available_memory();
  EXPECT_EQ(limit.bytes, 1000);
  EXPECT_EQ(limit.source, "PE_MEMORY_LIMIT_BYTES");
  EXPECT_NE(error_of([] { Trainer trainer(tiny()); }).find("PE_MEMORY_LIMIT_BYTES is 1e-06 GB"),
            std::string::npos);
  for (const char* bad : {"abc", "", "-5", "12GB", "0"}) {
    ::setenv("PE_MEMORY_LIMIT_BYTES", bad, 1);
    EXPECT_EQ(
        error_of([] { available_memory(); }),
        std::string("PE_MEMORY_LIMIT_BYTES: expected a positive whole number of bytes, got '") +
            bad + "'");
  }
  ::unsetenv("PE_MEMORY_LIMIT_BYTES");
  // This machine (Linux in CI) answers from /proc/meminfo.
  const AvailableMemory machine = available_memory();
  EXPECT_GT(machine.bytes, 0);
  EXPECT_FALSE(machine.source.empty());
}

// A learning rate of 1e3 blows up within a few steps: training stops at the first non-finite
// loss or gradient, naming the step, and the weights are still those of the last good step.
TEST(Trainer, DivergenceStopsTrainingAtTheStep) {
  TrainConfig c = tiny();
  c.lr = 1e3;
  c.warmup = 0;
  Trainer trainer(c);
  const std::string message = error_of([&] { trainer.train(); });
  EXPECT_NE(message.find("training diverged at step " + std::to_string(trainer.steps_done() + 1)),
            std::string::npos)
      << message;
  EXPECT_LT(trainer.steps_done(), c.steps);
  for (const ag::Tensor& p : trainer.model().parameters())
    for (double v : p.to_vector()) ASSERT_TRUE(std::isfinite(v));
  const std::string path = ::testing::TempDir() + "diverged.agt";
  trainer.save(path);
  EXPECT_NO_THROW(Trainer::resume(path));
}
