// Chapter 8: every encoding evaluated past its training length, the learned table's refusal,
// the held-out bits per character, and the probe past the training length.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "ag/error.hpp"
#include "ag/random.hpp"
#include "chapters/01-attention/encoding_registry.hpp"
#include "chapters/08-length/extrapolation.hpp"
#include "chapters/08-length/length_probe.hpp"
#include "chapters/08-length/tests/tiny_length_config.hpp"
#include "lab/chapter_registry.hpp"
#include "lab/trainer.hpp"

using namespace pe;

namespace {

TrainConfig tiny_config(const std::string& encoding, const std::string& task = "shiftk") {
  return tiny_length_config(encoding, task);
}

class Length : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { register_chapter_encodings(); }
};

}  // namespace

// grades: task 8.4
TEST_F(Length, EveryEncodingButTheLearnedTableRunsAtFourTimesItsTrainingLength) {
  for (const EncodingEntry& entry : registered_encodings()) {
    Trainer trainer(tiny_config(entry.name));
    trainer.train();
    const auto results = evaluate_past_training(trainer, {8, 16, 32}, 32);
    ASSERT_EQ(results.size(), 3u);
    EXPECT_TRUE(results[0].ran) << entry.name << ": " << results[0].error;
    for (const LengthResult& r : results) {
      if (entry.name == "learned" && r.length > 8) continue;
      EXPECT_TRUE(r.ran) << entry.name << " at " << r.length << ": " << r.error;
      EXPECT_TRUE(std::isfinite(r.loss)) << entry.name << " at " << r.length;
      EXPECT_GT(r.scored, 0) << entry.name << " at " << r.length;
      // the loss is in nats; bits per character divide it by ln 2
      EXPECT_NEAR(r.bits, r.loss / std::log(2.0), 1e-12) << entry.name << " at " << r.length;
    }
  }
}

// grades: task 8.4
TEST_F(Length, LearnedTablePastItsRowsIsRecordedWithItsOwnError) {
  Trainer trainer(tiny_config("learned"));
  const auto results = evaluate_past_training(trainer, {8, 9, 16}, 32);
  EXPECT_TRUE(results[0].ran);
  for (int i : {1, 2}) {
    EXPECT_FALSE(results[i].ran);
    // The chapter 3 encoding's message, not text of this chapter.
    EXPECT_NE(results[i].error.find("the table has max_len 8"), std::string::npos)
        << results[i].error;
    EXPECT_EQ(cannot_run_cell(results[i].error), "cannot run: table has 8 rows");
  }
  // Another error keeps its own words.
  EXPECT_EQ(cannot_run_cell("something else"), "cannot run: something else");
}

// grades: task 8.3
TEST_F(Length, HeldOutBitsScoreTheSameCharactersAtEveryLength) {
  const std::string text = "the quick brown fox jumps over the lazy dog. ";
  std::string corpus;
  for (int i = 0; i < 20; ++i) corpus += text;
  const auto path = std::filesystem::temp_directory_path() /
                    ("pe_ch08_corpus_" + std::to_string(::getpid()) + ".txt");
  std::ofstream(path) << corpus;
  TrainConfig c = tiny_config("rope", "charlm");
  c.task_options["corpus"] = path.string();
  Trainer trainer(c);
  std::filesystem::remove(path);

  const CharVocabulary vocabulary(corpus);
  EXPECT_EQ(vocabulary.size(), trainer.task().vocab_size());
  const auto tokens = vocabulary.encode(corpus);
  // The task numbers tokens by sorted byte: ' ' is the smallest, 't' follows 'r' and 's'.
  EXPECT_EQ(trainer.task().token_text(tokens[3]), "\u2423");
  EXPECT_EQ(trainer.task().token_text(tokens[0]), "t");
  EXPECT_THROW(vocabulary.encode("Q"), ag::Error);

  for (std::int64_t L : {8, 16, 32, 64}) {
    const LengthResult r = held_out_bits(trainer.model(), tokens, L, 128);
    ASSERT_TRUE(r.ran) << r.error;
    EXPECT_EQ(r.scored, 128);
    // An untrained model is near uniform: about log2(vocabulary) bits.
    EXPECT_NEAR(r.bits, std::log2(double(vocabulary.size())), 1.5);
    EXPECT_NEAR(r.bits, r.loss / std::log(2.0), 1e-12);
  }
  // Length 8 in one window of 8 gives what the model's own loss gives on those tokens.
  ag::Indices in{{tokens.begin(), tokens.begin() + 8}, {1, 8}};
  ag::Indices out{{tokens.begin() + 1, tokens.begin() + 9}, {1, 8}};
  ag::NoGradGuard no_grad;
  const double direct = sequence_loss(trainer.model().forward(in), out).item();
  EXPECT_NEAR(held_out_bits(trainer.model(), tokens, 8, 8).loss, direct, 1e-6);

  EXPECT_THROW(held_out_bits(trainer.model(), tokens, 12, 128), ag::Error);     // not a multiple
  EXPECT_THROW(held_out_bits(trainer.model(), tokens, 8, 8 * 200), ag::Error);  // too long

  // A model trained at randomized positions (L_max 32) is scored at positions drawn as in
  // training, from a fixed seed: the same numbers every time, not those of 0 .. T-1, and a
  // length above L_max is refused (recorded, as a learned table's refusal is).
  const LengthResult drawn = held_out_bits(trainer.model(), tokens, 8, 128, 32);
  ASSERT_TRUE(drawn.ran) << drawn.error;
  EXPECT_EQ(drawn.loss, held_out_bits(trainer.model(), tokens, 8, 128, 32).loss);
  EXPECT_NE(drawn.loss, held_out_bits(trainer.model(), tokens, 8, 128).loss);
  const LengthResult past = held_out_bits(trainer.model(), tokens, 64, 128, 32);
  EXPECT_FALSE(past.ran);
  EXPECT_NE(past.error.find("longer than L_max = 32"), std::string::npos) << past.error;
}

// grades: task 8.3
TEST_F(Length, HeldOutBitsRecordTheLearnedTablesRefusal) {
  std::string corpus;
  for (int i = 0; i < 40; ++i) corpus += "abcdefgh";
  const auto path = std::filesystem::temp_directory_path() /
                    ("pe_ch08_learned_" + std::to_string(::getpid()) + ".txt");
  std::ofstream(path) << corpus;
  TrainConfig c = tiny_config("learned", "charlm");
  c.task_options["corpus"] = path.string();
  Trainer trainer(c);
  std::filesystem::remove(path);
  const auto tokens = CharVocabulary(corpus).encode(corpus);
  EXPECT_TRUE(held_out_bits(trainer.model(), tokens, 8, 64).ran);
  const LengthResult past = held_out_bits(trainer.model(), tokens, 16, 64);
  EXPECT_FALSE(past.ran);
  EXPECT_EQ(cannot_run_cell(past.error), "cannot run: table has 8 rows");
}

TEST_F(Length, ProbeBandsHaveOneScorePerLayerAndBand) {
  Trainer trainer(tiny_config("none"));
  ag::Rng rng(5);
  std::vector<std::int64_t> tokens(96 * 16 + 1);
  for (auto& token : tokens) token = rng.randint(0, 26);
  const auto bands = probe_position_bands(trainer.model(), tokens, 16, 8);
  ASSERT_EQ(bands.size(), 3u);  // embedding + 2 blocks
  for (const auto& layer : bands) {
    ASSERT_EQ(layer.size(), 2u);
    for (const ProbeScore& s : layer) EXPECT_TRUE(std::isfinite(s.r2) && std::isfinite(s.mae));
  }
  // The embedding of NoPE holds no position: in no band does its probe come near resolving
  // the positions (R^2 1), whatever the band's place.
  for (const ProbeScore& s : bands[0]) EXPECT_LT(s.r2, 0.5);
  EXPECT_THROW(probe_position_bands(trainer.model(), tokens, 16, 5), ag::Error);
}
