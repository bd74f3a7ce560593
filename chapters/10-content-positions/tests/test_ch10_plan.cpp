// Chapter 10's plan of runs on chapter 8's bench and the probes its tables read: every run has
// a folder of its own and trains; the out-of-distribution sets are their tasks with other
// options; the probes read the gates the forward pass really uses; both encodings train,
// save and resume through the lab.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>

#include "chapters/01-attention/permutation.hpp"
#include "chapters/08-length/length_plan.hpp"
#include "chapters/10-content-positions/content_plan.hpp"
#include "chapters/10-content-positions/content_probe.hpp"
#include "chapters/10-content-positions/cope.hpp"
#include "lab/chapter_registry.hpp"
#include "lab/tasks.hpp"

using namespace pe;
using namespace pe::ch10;
using ag::Tensor;

namespace {

class ContentPlan : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { register_chapter_encodings(); }
};

// A small trained-shape model of a row, 2 layers as the plan has them, 3 steps.
std::unique_ptr<Trainer> tiny(const std::string& encoding, const std::string& task) {
  TrainConfig c = content_config({encoding, encoding, "10"}, task, 3, 1);
  c.batch = 4;
  c.eval_sequences = 4;
  auto trainer = std::make_unique<Trainer>(c);
  trainer->train();
  return trainer;
}

}  // namespace

TEST_F(ContentPlan, EveryRowTrainsEveryTaskAndSeedInAFolderOfItsOwn) {
  const std::vector<ContentRun> plan = plan_content_runs("out", 1, 3, 500, "corpus.txt", 97);
  const std::size_t tasks = kContentTasks.size() + kLengthTasks.size();
  ASSERT_EQ(plan.size(), kRows.size() * tasks * 3);
  std::set<std::string> folders;
  for (const ContentRun& p : plan) {
    folders.insert(p.run.out_dir);
    if (p.run.config.task != "charlm") {  // (charlm reads its corpus, which is not here)
      EXPECT_NO_THROW(check_trainable(p.run.config)) << p.run.out_dir;
    }
  }
  EXPECT_EQ(folders.size(), plan.size());
  // each run's vocabulary is its task's, as the trainer records it, so a finished run is reused
  for (const ContentRun& p : plan) {
    if (p.run.config.task == "charlm") continue;
    EXPECT_EQ(p.run.config.model.vocab, make_task(p.run.config.task)->vocab_size())
        << p.run.out_dir;
  }
  EXPECT_EQ(plan[kRows.size() * tasks - 1].run.config.seed, 1u);  // seed by seed
  EXPECT_EQ(plan[kRows.size() * tasks].run.config.seed, 2u);
  // chapter 8's tasks train chapter 8's configuration of a two-layer row
  const TrainConfig ours = content_config(kRows[1], "shiftk", 500, 2);
  const TrainConfig theirs = ch08::length_config({"rope", "rope", 2}, "shiftk", 500, 2);
  EXPECT_EQ(nlohmann::json(ours), nlohmann::json(theirs));
}

TEST_F(ContentPlan, OutOfDistributionSetsAreTheirTaskWithOtherOptions) {
  for (const OutOfDistribution& set : kOutOfDistribution) {
    EXPECT_NE(std::find(kContentTasks.begin(), kContentTasks.end(), set.task), kContentTasks.end())
        << set.name;
    const auto trained = make_task(set.task), variant = make_task(set.task, set.options);
    EXPECT_EQ(trained->vocab_size(), variant->vocab_size()) << set.name;
    // and they differ from the training distribution
    const Batch a = trained->held_out(8, 32, 5), b = variant->held_out(8, 32, 5);
    EXPECT_NE(a.inputs.values, b.inputs.values) << set.name;
  }
}

TEST_F(ContentPlan, AModelIsEvaluatedOnAVariantOfItsTaskAndNotOnAnotherVocabulary) {
  auto trainer = tiny("fox", "flipflop");
  const auto sparse = make_task("flipflop", {{"ignore", "0.98"}});
  const Evaluation e = trainer->evaluate(*sparse, 64, 4);
  EXPECT_GT(e.scored, 0);
  EXPECT_GE(e.accuracy, 0.0);
  EXPECT_LE(e.accuracy, 1.0);
  const auto letters = make_task("shiftk");
  EXPECT_THROW(trainer->evaluate(*letters, 32, 4), ag::Error);
}

TEST_F(ContentPlan, TheProbeReadsTheGatesTheForwardPassUses) {
  // The attention weights the model computed, against softmax(scores + CoPE's term) rebuilt
  // from the probe's input of the second layer: the same within rounding.
  auto trainer = tiny("cope", "counting");
  Decoder& model = trainer->model();
  model.to(ag::Dtype::f64);
  const Batch batch = trainer->task().held_out(2, 32, 7);
  model.capture_attention(true);
  {
    ag::NoGradGuard no_grad;
    model.forward(batch.inputs);
  }
  const Tensor captured = model.attention_weights()[1];
  model.capture_attention(false);
  const SelfAttention& attention = model.blocks[1]->attention;
  ag::NoGradGuard no_grad;
  const Tensor x = attention_input(model, batch.inputs, 1);
  const Tensor q = split_heads(attention.query.forward(x), attention.heads);
  const Tensor k = split_heads(attention.key.forward(x), attention.heads);
  Tensor scores =
      ag::mul(ag::matmul_transposed(q, k), 1.0 / std::sqrt(double(attention.head_width)));
  scores = attention.positions->bias(scores, q, k, 0);
  scores = ag::masked_fill(scores, causal_mask(32, 32, 0, ag::Dtype::f64),
                           -std::numeric_limits<double>::infinity());
  EXPECT_LT(max_abs_difference(ag::softmax(scores), captured), 1e-12);
  // and the probe's gates are the part's: in [0, 1], 0 after the query
  const Tensor gates = cope_gates_of(model, batch.inputs, 1);
  EXPECT_EQ(gates.at({1, 3, 4, 5}), 0.0);
  EXPECT_GT(gates.at({1, 3, 5, 4}), 0.0);
}

TEST_F(ContentPlan, MeansByTokenCountWhatTheyShould) {
  // One sequence [0, 1, 0], one head: the gates of keys 0 and 2 (token 0) and of key 1 (token 1)
  const ag::Indices ids{{0, 1, 0}, {1, 3}};
  const Tensor gates =
      ag::from_vector({0.5, 0, 0, 0.1, 0.3, 0, 0.7, 0.2, 0.9}, {1, 1, 3, 3}, ag::Dtype::f64);
  const auto gate_means = mean_gate_by_key_token(gates, ids, 3);
  EXPECT_NEAR(gate_means[0][0], (0.5 + 0.1 + 0.7 + 0.9) / 4, 1e-15);
  EXPECT_NEAR(gate_means[0][1], (0.3 + 0.2) / 2, 1e-15);
  EXPECT_TRUE(std::isnan(gate_means[0][2]));  // token 2 never occurs
  const Tensor log_f =
      ag::from_vector({std::log(0.5), std::log(0.9), std::log(0.7)}, {1, 1, 3}, ag::Dtype::f64);
  const auto keep = mean_keep_by_token(log_f, ids, 3);
  EXPECT_NEAR(keep[0][0], 0.6, 1e-15);
  EXPECT_NEAR(keep[0][1], 0.9, 1e-15);
  EXPECT_THROW(mean_gate_by_key_token(gates, {{0, 1}, {1, 2}}, 3), ag::Error);
  EXPECT_THROW(mean_keep_by_token(log_f, {{0, 5, 0}, {1, 3}}, 3), ag::Error);  // id past V
}

TEST_F(ContentPlan, BothEncodingsResumeBitForBit) {
  for (const std::string encoding : {"cope", "fox"}) {
    TrainConfig c = content_config({encoding, encoding, "10"}, "selcopy", 6, 3);
    c.batch = 4;
    c.eval_sequences = 4;
    Trainer straight(c);
    straight.train();
    Trainer first(c);
    first.train_until(3);
    const std::string checkpoint = ::testing::TempDir() + "/ch10-" + encoding + ".agt";
    first.save(checkpoint);
    auto resumed = Trainer::resume(checkpoint);
    resumed->train();
    const Batch batch = straight.task().held_out(2, 32, 9);
    ag::NoGradGuard no_grad;
    EXPECT_EQ(straight.model().forward(batch.inputs).to_vector(),
              resumed->model().forward(batch.inputs).to_vector())
        << encoding;
  }
}
