// The tasks: every target follows its task's rule, ignored positions are exactly the
// unscored ones, batches are reproducible, and bad requests fail with a readable ag::Error.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "ag/error.hpp"
#include "lab/tasks.hpp"

using namespace pe;

namespace {

constexpr std::int64_t kBatch = 64;
const char* const kDefaultCorpus = "/usr/share/common-licenses/GPL-3";

std::int64_t at(const ag::Indices& x, std::int64_t b, std::int64_t t) {
  return x.values[static_cast<std::size_t>(b * x.shape[1] + t)];
}

// A file of the running test's own: ctest runs the tests as processes side by side, and two
// writing one shared path let one of them read the file while the other had just emptied it.
std::string write_temp_file(const std::string& name, const std::string& contents) {
  const std::string path = ::testing::TempDir() +
                           ::testing::UnitTest::GetInstance()->current_test_info()->name() + "_" +
                           name;
  std::ofstream(path, std::ios::binary) << contents;
  return path;
}

// A corpus whose characters are all printable, so token_text spells them as themselves.
const std::string kSmallCorpus = "the cat sat on the mat\nand the dog sat on the log\n";

std::string small_corpus_path() { return write_temp_file("pe_tasks_small.txt", kSmallCorpus); }

std::unique_ptr<Task> make_any(const std::string& name) {
  if (name == "charlm") return make_task(name, {{"corpus", small_corpus_path()}});
  return make_task(name);
}

// A length every task accepts (recall needs odd, copy and flipflop even, selcopy 17 or more).
std::int64_t valid_length(const std::string& name) { return name == "recall" ? 21 : 20; }

// Runs `action` and expects an ag::Error whose text contains every one of `parts`.
template <class Action>
void expect_error_mentioning(Action action, std::initializer_list<std::string> parts) {
  try {
    action();
    ADD_FAILURE() << "expected ag::Error";
  } catch (const ag::Error& error) {
    const std::string text = error.what();
    for (const auto& part : parts)
      EXPECT_NE(text.find(part), std::string::npos) << "'" << part << "' missing from: " << text;
  }
}

bool same_batch(const Batch& a, const Batch& b) {
  return a.inputs.values == b.inputs.values && a.targets.values == b.targets.values &&
         a.inputs.shape == b.inputs.shape && a.targets.shape == b.targets.shape;
}

}  // namespace

// ----- every task -----

TEST(Tasks, TaskNamesAreTheEightTasks) {
  EXPECT_EQ(task_names(), (std::vector<std::string>{"shiftk", "alternating", "copy", "recall",
                                                    "flipflop", "selcopy", "counting", "charlm"}));
}

TEST(Tasks, EveryTaskGivesShapeBTAndTokensInTheVocabulary) {
  for (const auto& name : task_names()) {
    SCOPED_TRACE(name);
    const auto task = make_any(name);
    EXPECT_EQ(task->name(), name);
    EXPECT_FALSE(task->description().empty());
    const std::int64_t length = valid_length(name);
    ag::Rng rng(1);
    const Batch batch = task->sample(kBatch, length, rng);
    EXPECT_EQ(batch.inputs.shape, (ag::Shape{kBatch, length}));
    EXPECT_EQ(batch.targets.shape, (ag::Shape{kBatch, length}));
    ASSERT_EQ(batch.inputs.values.size(), static_cast<std::size_t>(kBatch * length));
    ASSERT_EQ(batch.targets.values.size(), static_cast<std::size_t>(kBatch * length));
    for (auto token : batch.inputs.values) {
      EXPECT_GE(token, 0);
      EXPECT_LT(token, task->vocab_size());
    }
    for (auto target : batch.targets.values)
      EXPECT_TRUE(target == kIgnore || (target >= 0 && target < task->vocab_size()));
  }
}

TEST(Tasks, SameSeedGivesTheSameBatch) {
  for (const auto& name : task_names()) {
    SCOPED_TRACE(name);
    const auto task = make_any(name);
    ag::Rng first(42), second(42), other(43);
    const auto length = valid_length(name);
    const Batch a = task->sample(kBatch, length, first);
    EXPECT_TRUE(same_batch(a, task->sample(kBatch, length, second)));
    EXPECT_FALSE(same_batch(a, task->sample(kBatch, length, other)));
    // The generator advanced, so the next draw is new.
    EXPECT_FALSE(same_batch(a, task->sample(kBatch, length, first)));
  }
}

TEST(Tasks, HeldOutIsReproducibleAndUnlikeTrainingDraws) {
  for (const auto& name : task_names()) {
    SCOPED_TRACE(name);
    const auto task = make_any(name);
    const auto length = valid_length(name);
    const Batch held = task->held_out(kBatch, length, 7);
    EXPECT_TRUE(same_batch(held, task->held_out(kBatch, length, 7)));
    EXPECT_TRUE(same_batch(held, make_any(name)->held_out(kBatch, length, 7)));
    EXPECT_FALSE(same_batch(held, task->held_out(kBatch, length, 8)));
    // Training draws with the same seed, from the root generator or a training stream.
    ag::Rng root(7);
    ag::Rng training_stream = ag::Rng(7).fork(1);
    EXPECT_FALSE(same_batch(held, task->sample(kBatch, length, root)));
    EXPECT_FALSE(same_batch(held, task->sample(kBatch, length, training_stream)));
  }
}

TEST(Tasks, LetterTokenTextIsTheLetter) {
  const auto task = make_task("shiftk");
  EXPECT_EQ(task->token_text(0), "A");
  EXPECT_EQ(task->token_text(12), "M");
  EXPECT_EQ(task->token_text(25), "Z");
  EXPECT_THROW(task->token_text(26), ag::Error);
  EXPECT_THROW(task->token_text(-1), ag::Error);
}

TEST(Tasks, LetterTasksHaveTwentySixTokens) {
  for (const char* name : {"shiftk", "alternating", "copy", "recall"})
    EXPECT_EQ(make_task(name)->vocab_size(), 26) << name;
}

// ----- errors shared by all tasks -----

TEST(Tasks, UnknownTaskListsTheKnownNames) {
  expect_error_mentioning([] { make_task("sort"); },
                          {"sort", "shiftk", "alternating", "copy", "recall", "flipflop", "selcopy",
                           "counting", "charlm"});
}

TEST(Tasks, UnknownOptionIsNamed) {
  expect_error_mentioning([] { make_task("shiftk", {{"kk", "3"}}); }, {"shiftk", "kk", "k"});
  expect_error_mentioning([] { make_task("copy", {{"k", "3"}}); }, {"copy", "'k'"});
  expect_error_mentioning([] { make_task("charlm", {{"path", "x"}}); }, {"path", "corpus"});
  expect_error_mentioning(
      [] {
        make_task("flipflop", {{"bogus", "1"}});
      },
      {"flipflop", "'bogus'", "ignore"});
  expect_error_mentioning([] { make_task("selcopy", {{"k", "1"}}); }, {"selcopy", "'k'", "count"});
  expect_error_mentioning(
      [] {
        make_task("counting", {{"count", "1"}});
      },
      {"counting", "'count'", "vars"});
}

TEST(Tasks, SampleRejectsAnEmptyBatch) {
  ag::Rng rng(0);
  expect_error_mentioning([&] { make_task("copy")->sample(0, 8, rng); }, {"copy", "batch"});
}

TEST(Tasks, SampleRejectsLengthsBelowTheMinimum) {
  ag::Rng rng(0);
  expect_error_mentioning([&] { make_task("shiftk")->sample(2, 4, rng); },
                          {"shiftk", "4", "minimum is 5"});
  expect_error_mentioning([&] { make_task("alternating")->sample(2, 1, rng); },
                          {"alternating", "1", "minimum is 2"});
  expect_error_mentioning([&] { make_task("copy")->sample(2, 2, rng); },
                          {"copy", "2", "minimum is 4"});
  expect_error_mentioning([&] { make_task("recall")->sample(2, 1, rng); },
                          {"recall", "1", "minimum is 3"});
}

TEST(Tasks, CheckLengthRefusesWhatSampleWouldRefuse) {
  // A run checks its lengths so before it trains; sample() checks the same way.
  EXPECT_NO_THROW(make_task("flipflop")->check_length(10));
  expect_error_mentioning([] { make_task("flipflop")->check_length(11); }, {"flipflop", "even"});
  expect_error_mentioning([] { make_task("recall")->check_length(29); }, {"recall", "27"});
  expect_error_mentioning([] { make_task("shiftk")->check_length(4); }, {"minimum is 5"});
}

// ----- ShiftK -----

TEST(Tasks, ShiftKTargetsAreInputsShiftedByK) {
  for (std::int64_t k : {1, 4, 7}) {
    SCOPED_TRACE(k);
    const auto task =
        k == 4 ? make_task("shiftk") : make_task("shiftk", {{"k", std::to_string(k)}});
    ag::Rng rng(3);
    const std::int64_t length = 16;
    const Batch batch = task->sample(kBatch, length, rng);
    for (std::int64_t b = 0; b < kBatch; ++b)
      for (std::int64_t t = 0; t < length; ++t) {
        const std::int64_t expected = t < k ? kIgnore : at(batch.inputs, b, t - k);
        ASSERT_EQ(at(batch.targets, b, t), expected) << "b=" << b << " t=" << t;
      }
  }
}

TEST(Tasks, ShiftKMinimumLengthIsKPlusOne) {
  EXPECT_EQ(make_task("shiftk")->min_length(), 5);
  EXPECT_EQ(make_task("shiftk", {{"k", "9"}})->min_length(), 10);
  ag::Rng rng(0);
  const Batch batch = make_task("shiftk", {{"k", "2"}})->sample(4, 3, rng);
  for (std::int64_t b = 0; b < 4; ++b) EXPECT_EQ(at(batch.targets, b, 2), at(batch.inputs, b, 0));
}

TEST(Tasks, ShiftKInputsUseTheWholeAlphabet) {
  ag::Rng rng(5);
  const Batch batch = make_task("shiftk")->sample(kBatch, 32, rng);
  const std::set<std::int64_t> seen(batch.inputs.values.begin(), batch.inputs.values.end());
  EXPECT_EQ(seen.size(), 26u);
}

TEST(Tasks, ShiftKRejectsBadK) {
  for (const char* bad : {"0", "-2", "abc", "2.5", "", "3x", " 3"}) {
    SCOPED_TRACE(bad);
    const std::string quoted = std::string("'").append(bad).append("'");
    expect_error_mentioning([&] { make_task("shiftk", {{"k", bad}}); }, {"option k", quoted});
  }
}

// ----- AlternatingChar -----

TEST(Tasks, AlternatingTargetsAreTheNextLetter) {
  ag::Rng rng(11);
  const std::int64_t length = 9;
  const Batch batch = make_task("alternating")->sample(kBatch, length, rng);
  for (std::int64_t b = 0; b < kBatch; ++b) {
    const std::int64_t first = at(batch.inputs, b, 0), second = at(batch.inputs, b, 1);
    EXPECT_EQ(at(batch.targets, b, 0), kIgnore);
    for (std::int64_t t = 0; t < length; ++t) {
      ASSERT_EQ(at(batch.inputs, b, t), t % 2 == 0 ? first : second) << "b=" << b << " t=" << t;
      if (t > 0) {
        ASSERT_EQ(at(batch.targets, b, t), t % 2 == 0 ? second : first) << "b=" << b << " t=" << t;
      }
    }
    // Wherever the next input exists, the target is it.
    for (std::int64_t t = 1; t + 1 < length; ++t)
      EXPECT_EQ(at(batch.targets, b, t), at(batch.inputs, b, t + 1));
  }
}

TEST(Tasks, AlternatingLettersAreDistinct) {
  ag::Rng rng(12);
  const Batch batch = make_task("alternating")->sample(1000, 2, rng);
  std::set<std::int64_t> firsts, seconds;
  for (std::int64_t b = 0; b < 1000; ++b) {
    ASSERT_NE(at(batch.inputs, b, 0), at(batch.inputs, b, 1)) << "b=" << b;
    firsts.insert(at(batch.inputs, b, 0));
    seconds.insert(at(batch.inputs, b, 1));
  }
  // Both letters range over the whole alphabet (no letter is excluded by the skip trick).
  EXPECT_EQ(firsts.size(), 26u);
  EXPECT_EQ(seconds.size(), 26u);
}

// ----- Copy -----

TEST(Tasks, CopySecondHalfRepeatsTheFirst) {
  ag::Rng rng(21);
  const std::int64_t length = 14, half = 7;
  const Batch batch = make_task("copy")->sample(kBatch, length, rng);
  for (std::int64_t b = 0; b < kBatch; ++b)
    for (std::int64_t t = 0; t < half; ++t)
      ASSERT_EQ(at(batch.inputs, b, half + t), at(batch.inputs, b, t)) << "b=" << b << " t=" << t;
}

TEST(Tasks, CopyScoresExactlyThePositionsBeforeACopiedLetter) {
  for (std::int64_t length : {4, 10, 16}) {
    SCOPED_TRACE(length);
    ag::Rng rng(22);
    const Batch batch = make_task("copy")->sample(kBatch, length, rng);
    for (std::int64_t b = 0; b < kBatch; ++b)
      for (std::int64_t t = 0; t < length; ++t) {
        const bool scored = t >= length / 2 - 1 && t <= length - 2;
        const std::int64_t expected = scored ? at(batch.inputs, b, t + 1) : kIgnore;
        ASSERT_EQ(at(batch.targets, b, t), expected) << "b=" << b << " t=" << t;
      }
  }
}

TEST(Tasks, CopyRejectsOddLengths) {
  ag::Rng rng(0);
  expect_error_mentioning([&] { make_task("copy")->sample(2, 9, rng); }, {"copy", "even", "9"});
}

// ----- AssociativeRecall -----

TEST(Tasks, RecallKeysAreDistinctAndTheQueryIsOneOfThem) {
  for (std::int64_t length : {3, 11, 27}) {
    SCOPED_TRACE(length);
    ag::Rng rng(31);
    const Batch batch = make_task("recall")->sample(kBatch, length, rng);
    for (std::int64_t b = 0; b < kBatch; ++b) {
      std::set<std::int64_t> keys;
      for (std::int64_t t = 0; t + 1 < length; t += 2) {
        const std::int64_t key = at(batch.inputs, b, t), value = at(batch.inputs, b, t + 1);
        EXPECT_TRUE(key >= 0 && key < 13) << "key " << key;           // A..M
        EXPECT_TRUE(value >= 13 && value < 26) << "value " << value;  // N..Z
        EXPECT_TRUE(keys.insert(key).second) << "repeated key at b=" << b << " t=" << t;
      }
      EXPECT_TRUE(keys.count(at(batch.inputs, b, length - 1))) << "b=" << b;
    }
  }
}

TEST(Tasks, RecallScoresOnlyTheFinalPositionWithTheKeysValue) {
  ag::Rng rng(32);
  const std::int64_t length = 15;
  const Batch batch = make_task("recall")->sample(kBatch, length, rng);
  for (std::int64_t b = 0; b < kBatch; ++b) {
    for (std::int64_t t = 0; t + 1 < length; ++t)
      ASSERT_EQ(at(batch.targets, b, t), kIgnore) << "b=" << b << " t=" << t;
    const std::int64_t query = at(batch.inputs, b, length - 1);
    std::int64_t value = kIgnore;
    for (std::int64_t t = 0; t + 1 < length; t += 2)
      if (at(batch.inputs, b, t) == query) value = at(batch.inputs, b, t + 1);
    EXPECT_EQ(at(batch.targets, b, length - 1), value) << "b=" << b;
  }
}

TEST(Tasks, RecallQueriesEveryPairPosition) {
  // The query is not always the first or the last key.
  ag::Rng rng(33);
  const std::int64_t length = 9;
  const Batch batch = make_task("recall")->sample(500, length, rng);
  std::set<std::int64_t> asked_pairs;
  for (std::int64_t b = 0; b < 500; ++b)
    for (std::int64_t t = 0; t + 1 < length; t += 2)
      if (at(batch.inputs, b, t) == at(batch.inputs, b, length - 1)) asked_pairs.insert(t / 2);
  EXPECT_EQ(asked_pairs.size(), 4u);
}

TEST(Tasks, RecallRejectsEvenAndTooLongLengths) {
  ag::Rng rng(0);
  expect_error_mentioning([&] { make_task("recall")->sample(2, 10, rng); },
                          {"recall", "odd", "10"});
  expect_error_mentioning([&] { make_task("recall")->sample(2, 29, rng); }, {"recall", "27", "29"});
}

// ----- FlipFlop -----

namespace {

constexpr std::int64_t kWrite = 0, kIgnoreInstruction = 1, kRead = 2, kBitZero = 3, kBitOne = 4;

// The share of the middle instructions (not the first write, not the last read) that are i.
double ignore_share(const Batch& batch) {
  const std::int64_t length = batch.inputs.shape[1];
  std::int64_t ignores = 0, instructions = 0;
  for (std::int64_t b = 0; b < batch.inputs.shape[0]; ++b)
    for (std::int64_t t = 2; t + 2 < length; t += 2, ++instructions)
      ignores += at(batch.inputs, b, t) == kIgnoreInstruction;
  return double(ignores) / double(instructions);
}

}  // namespace

TEST(Tasks, FlipFlopEveryReadIsScoredWithTheLastWrittenBit) {
  for (std::int64_t length : {4, 12, 64}) {
    SCOPED_TRACE(length);
    ag::Rng rng(51);
    const Batch batch = make_task("flipflop")->sample(kBatch, length, rng);
    for (std::int64_t b = 0; b < kBatch; ++b) {
      EXPECT_EQ(at(batch.inputs, b, 0), kWrite) << "b=" << b;
      EXPECT_EQ(at(batch.inputs, b, length - 2), kRead) << "b=" << b;
      std::int64_t written = kIgnore;  // replayed from the inputs alone
      for (std::int64_t t = 0; t < length; t += 2) {
        const std::int64_t instruction = at(batch.inputs, b, t), bit = at(batch.inputs, b, t + 1);
        ASSERT_TRUE(instruction >= kWrite && instruction <= kRead) << "b=" << b << " t=" << t;
        ASSERT_TRUE(bit == kBitZero || bit == kBitOne) << "b=" << b << " t=" << t;
        if (instruction == kWrite) written = bit;
        if (instruction == kRead) {
          ASSERT_NE(written, kIgnore) << "a read before any write at b=" << b << " t=" << t;
          EXPECT_EQ(bit, written) << "b=" << b << " t=" << t;  // the read's bit is the answer
        }
        EXPECT_EQ(at(batch.targets, b, t), instruction == kRead ? written : kIgnore)
            << "b=" << b << " t=" << t;
        EXPECT_EQ(at(batch.targets, b, t + 1), kIgnore) << "b=" << b << " t=" << t + 1;
      }
    }
  }
}

TEST(Tasks, FlipFlopIgnoreOptionSetsTheShareOfIgnores) {
  // 256 sequences of 62 middle instructions: the share's standard error is below 0.004.
  const auto share = [](const TaskOptions& options) {
    ag::Rng rng(52);
    return ignore_share(make_task("flipflop", options)->sample(256, 128, rng));
  };
  EXPECT_NEAR(share({}), 0.8, 0.02);  // the paper's training distribution
  EXPECT_NEAR(share({{"ignore", "0.98"}}), 0.98, 0.02);
  EXPECT_NEAR(share({{"ignore", "0.1"}}), 0.1, 0.02);
  EXPECT_EQ(share({{"ignore", "0"}}), 0.0);
  // Writes and reads share the rest equally.
  ag::Rng rng(53);
  const Batch dense = make_task("flipflop", {{"ignore", "0"}})->sample(256, 128, rng);
  const auto writes = std::count(dense.inputs.values.begin(), dense.inputs.values.end(), kWrite);
  const auto reads = std::count(dense.inputs.values.begin(), dense.inputs.values.end(), kRead);
  EXPECT_NEAR(double(writes) / double(writes + reads), 0.5, 0.02);
}

TEST(Tasks, FlipFlopTokensAreInstructionsAndBits) {
  const auto task = make_task("flipflop");
  ASSERT_EQ(task->vocab_size(), 5);
  for (std::int64_t token = 0; token < 5; ++token)
    EXPECT_EQ(task->token_text(token), (std::vector<std::string>{"w", "i", "r", "0", "1"})[token]);
  EXPECT_THROW(task->token_text(5), ag::Error);
  EXPECT_NE(task->description().find("ignore=0.8"), std::string::npos);
  EXPECT_NE(make_task("flipflop", {{"ignore", "0.98"}})->description().find("ignore=0.98"),
            std::string::npos);
}

TEST(Tasks, FlipFlopRejectsOddShortLengthsAndBadIgnore) {
  ag::Rng rng(0);
  expect_error_mentioning([&] { make_task("flipflop")->sample(2, 9, rng); },
                          {"flipflop", "even", "9"});
  expect_error_mentioning([&] { make_task("flipflop")->sample(2, 2, rng); },
                          {"flipflop", "2", "minimum is 4"});
  for (const char* bad : {"1", "1.5", "-0.1", "nan", "inf", "abc", "", "0.5x", " 0.5"}) {
    SCOPED_TRACE(bad);
    const std::string quoted = std::string("'").append(bad).append("'");
    expect_error_mentioning(
        [&] {
          make_task("flipflop", {{"ignore", bad}});
        },
        {"flipflop", "option ignore", "0 <= p < 1", quoted});
  }
}

// ----- SelectiveCopy -----

namespace {

constexpr std::int64_t kBlank = 26, kSeparator = 27;

}  // namespace

TEST(Tasks, SelCopyCopiesTheScatteredLettersInOrder) {
  for (const auto& [count, length] : std::vector<std::pair<std::int64_t, std::int64_t>>{
           {8, 17}, {8, 32}, {8, 64}, {1, 3}, {3, 20}}) {
    SCOPED_TRACE(std::to_string(count) + " letters, length " + std::to_string(length));
    const auto task = make_task("selcopy", {{"count", std::to_string(count)}});
    ag::Rng rng(61);
    const Batch batch = task->sample(kBatch, length, rng);
    const std::int64_t separator = length - count - 1;
    for (std::int64_t b = 0; b < kBatch; ++b) {
      std::vector<std::int64_t> letters;  // the region's non-blank tokens, in order
      for (std::int64_t t = 0; t < separator; ++t) {
        const std::int64_t token = at(batch.inputs, b, t);
        ASSERT_TRUE(token < 26 || token == kBlank) << "b=" << b << " t=" << t;
        if (token != kBlank) letters.push_back(token);
      }
      ASSERT_EQ(static_cast<std::int64_t>(letters.size()), count) << "b=" << b;
      EXPECT_EQ(at(batch.inputs, b, separator), kSeparator) << "b=" << b;
      for (std::int64_t t = 0; t < length; ++t) {
        const std::int64_t copied = t - separator;  // the index of the letter predicted at t
        if (t > separator) {
          ASSERT_EQ(at(batch.inputs, b, t), letters[copied - 1]) << "b=" << b << " t=" << t;
        }
        const std::int64_t expected = copied >= 0 && copied < count ? letters[copied] : kIgnore;
        ASSERT_EQ(at(batch.targets, b, t), expected) << "b=" << b << " t=" << t;
      }
    }
  }
}

TEST(Tasks, SelCopyScattersTheLettersOverTheWholeRegion) {
  // Every place before the separator holds a letter in some sequences and a blank in others.
  ag::Rng rng(62);
  const std::int64_t length = 32, separator = length - 8 - 1;
  const Batch batch = make_task("selcopy")->sample(500, length, rng);
  for (std::int64_t t = 0; t < separator; ++t) {
    std::int64_t letters = 0;
    for (std::int64_t b = 0; b < 500; ++b) letters += at(batch.inputs, b, t) != kBlank;
    EXPECT_GT(letters, 0) << "t=" << t;
    EXPECT_LT(letters, 500) << "t=" << t;
  }
}

TEST(Tasks, SelCopyTokensAreLettersBlankAndSeparator) {
  const auto task = make_task("selcopy");
  ASSERT_EQ(task->vocab_size(), 28);
  EXPECT_EQ(task->token_text(0), "A");
  EXPECT_EQ(task->token_text(25), "Z");
  EXPECT_EQ(task->token_text(kBlank), "_");
  EXPECT_EQ(task->token_text(kSeparator), "sep");
  EXPECT_THROW(task->token_text(28), ag::Error);
  EXPECT_EQ(task->min_length(), 17);
  EXPECT_EQ(make_task("selcopy", {{"count", "3"}})->min_length(), 7);
}

TEST(Tasks, SelCopyRejectsShortLengthsAndBadCounts) {
  ag::Rng rng(0);
  expect_error_mentioning([&] { make_task("selcopy")->sample(2, 16, rng); },
                          {"selcopy", "16", "minimum is 17"});
  for (const char* bad : {"0", "-1", "1001", "2.5", "x", ""}) {
    SCOPED_TRACE(bad);
    const std::string quoted = std::string("'").append(bad).append("'");
    expect_error_mentioning(
        [&] {
          make_task("selcopy", {{"count", bad}});
        },
        {"selcopy", "option count", "from 1 to 1000", quoted});
  }
}

// ----- Counting -----

namespace {

constexpr std::int64_t kMaxValue = 10, kSet = 11, kIncrement = 12, kPass = 13, kPrint = 14,
                       kFirstVariable = 15;

// Runs the program of row b (every token but the last two) and returns the value of the
// variable that print names; fails the test on a token out of place.
std::int64_t replay(const Batch& batch, std::int64_t b, std::int64_t variables) {
  const std::int64_t length = batch.inputs.shape[1];
  std::map<std::int64_t, std::int64_t> value;
  for (std::int64_t t = 0; t < length - 2;) {
    const std::int64_t token = at(batch.inputs, b, t);
    if (token == kPass) {
      ++t;
      continue;
    }
    const std::int64_t variable = token - kFirstVariable;
    EXPECT_TRUE(variable >= 0 && variable < variables) << "b=" << b << " t=" << t;
    const std::int64_t op = at(batch.inputs, b, t + 1);
    if (op == kSet) {
      value[variable] = 0;
    } else {
      EXPECT_EQ(op, kIncrement) << "b=" << b << " t=" << t + 1;
      EXPECT_TRUE(value.count(variable)) << "an increment before a set at b=" << b << " t=" << t;
      EXPECT_LT(++value[variable], kMaxValue + 1) << "b=" << b << " t=" << t;
    }
    t += 2;
  }
  EXPECT_EQ(at(batch.inputs, b, length - 2), kPrint) << "b=" << b;
  const std::int64_t asked = at(batch.inputs, b, length - 1) - kFirstVariable;
  EXPECT_TRUE(value.count(asked)) << "print names a variable never set at b=" << b;
  return value.count(asked) ? value[asked] : kIgnore;
}

}  // namespace

TEST(Tasks, CountingTargetIsTheValueTheProgramLeaves) {
  for (std::int64_t variables : {1, 3, 8})
    for (std::int64_t length : {4, 5, 32, 129}) {
      SCOPED_TRACE(std::to_string(variables) + " variables, length " + std::to_string(length));
      const auto task = make_task("counting", {{"vars", std::to_string(variables)}});
      ag::Rng rng(71);
      const Batch batch = task->sample(kBatch, length, rng);
      for (std::int64_t b = 0; b < kBatch; ++b) {
        for (std::int64_t t = 0; t + 1 < length; ++t)
          ASSERT_EQ(at(batch.targets, b, t), kIgnore) << "b=" << b << " t=" << t;
        EXPECT_EQ(at(batch.targets, b, length - 1), replay(batch, b, variables)) << "b=" << b;
      }
    }
}

TEST(Tasks, CountingStatementsFollowThePapersWeights) {
  // Statements after the first (always a set) are drawn set 1, pass 50, increment 7 of 58. An
  // increment past 10 is redrawn; at length 32 (about 25 statements) that almost never happens.
  ag::Rng rng(72);
  const std::int64_t length = 32, sequences = 1000;
  const Batch batch = make_task("counting")->sample(sequences, length, rng);
  std::map<std::int64_t, double> statements;  // each statement has one of these three tokens
  std::set<std::int64_t> answers;
  for (std::int64_t b = 0; b < sequences; ++b) {
    for (std::int64_t t = 2; t < length - 3; ++t)  // the last one may be a pass that fills a gap
      ++statements[at(batch.inputs, b, t)];
    answers.insert(at(batch.targets, b, length - 1));
  }
  const double all = statements[kPass] + statements[kSet] + statements[kIncrement];
  EXPECT_NEAR(statements[kSet] / all, 1.0 / 58, 0.005);
  EXPECT_NEAR(statements[kPass] / all, 50.0 / 58, 0.015);
  EXPECT_NEAR(statements[kIncrement] / all, 7.0 / 58, 0.015);
  EXPECT_GE(answers.size(), 6u);  // many values are asked for, not just 0
  // A long program reaches the paper's largest value, 10 (the replay test: never more).
  const Batch long_programs = make_task("counting")->sample(64, 512, rng);
  std::int64_t largest = 0;
  for (std::int64_t b = 0; b < 64; ++b)
    largest = std::max(largest, at(long_programs.targets, b, 511));
  EXPECT_EQ(largest, kMaxValue);
}

TEST(Tasks, CountingTokensAreValuesWordsAndVariables) {
  for (const char* variables : {"1", "3", "8"}) {
    const auto task = make_task("counting", {{"vars", variables}});
    ASSERT_EQ(task->vocab_size(), 23) << variables;  // the same for every option
    EXPECT_EQ(task->token_text(0), "0");
    EXPECT_EQ(task->token_text(kMaxValue), "10");
    EXPECT_EQ(task->token_text(kSet), "=0");
    EXPECT_EQ(task->token_text(kIncrement), "++");
    EXPECT_EQ(task->token_text(kPass), "pass");
    EXPECT_EQ(task->token_text(kPrint), "print");
    EXPECT_EQ(task->token_text(kFirstVariable), "a");
    EXPECT_EQ(task->token_text(22), "h");
    EXPECT_THROW(task->token_text(23), ag::Error);
  }
}

TEST(Tasks, CountingRejectsShortLengthsAndBadVariableCounts) {
  ag::Rng rng(0);
  expect_error_mentioning([&] { make_task("counting")->sample(2, 3, rng); },
                          {"counting", "3", "minimum is 4"});
  for (const char* bad : {"0", "9", "-3", "x", "", "2.0"}) {
    SCOPED_TRACE(bad);
    const std::string quoted = std::string("'").append(bad).append("'");
    expect_error_mentioning(
        [&] {
          make_task("counting", {{"vars", bad}});
        },
        {"counting", "option vars", "from 1 to 8", quoted});
  }
}

// ----- CharLM -----

TEST(Tasks, CharLMVocabularyIsTheSortedDistinctBytes) {
  const auto task = make_task("charlm", {{"corpus", small_corpus_path()}});
  const std::set<char> distinct(kSmallCorpus.begin(), kSmallCorpus.end());
  ASSERT_EQ(task->vocab_size(), static_cast<std::int64_t>(distinct.size()));
  EXPECT_EQ(task->token_text(0), "\\n");     // '\n' sorts first,
  EXPECT_EQ(task->token_text(1), "\u2423");  // then ' ',
  EXPECT_EQ(task->token_text(2), "a");       // then the letters in order.
  EXPECT_EQ(task->token_text(task->vocab_size() - 1), "t");
  EXPECT_THROW(task->token_text(task->vocab_size()), ag::Error);
}

TEST(Tasks, CharLMWindowsAreConsecutiveTextAndTargetsAreTheNextCharacter) {
  const auto task = make_task("charlm", {{"corpus", small_corpus_path()}});
  const std::set<char> distinct(kSmallCorpus.begin(), kSmallCorpus.end());
  const std::string byte_of(distinct.begin(), distinct.end());  // token -> character
  ag::Rng rng(41);
  const std::int64_t length = 10;
  const Batch batch = task->sample(kBatch, length, rng);
  std::set<std::size_t> starts;
  for (std::int64_t b = 0; b < kBatch; ++b) {
    std::string inputs, targets;
    for (std::int64_t t = 0; t < length; ++t) {
      inputs += byte_of[static_cast<std::size_t>(at(batch.inputs, b, t))];
      targets += byte_of[static_cast<std::size_t>(at(batch.targets, b, t))];
    }
    EXPECT_EQ(inputs.substr(1), targets.substr(0, length - 1)) << "b=" << b;
    const std::string window = inputs + targets.back();
    const auto start = kSmallCorpus.find(window);
    ASSERT_NE(start, std::string::npos) << "window not in corpus: " << window;
    starts.insert(start);
  }
  EXPECT_GT(starts.size(), 10u);  // windows start in many places
}

TEST(Tasks, CharLMWindowMayCoverTheWholeFile) {
  const auto path = write_temp_file("pe_tasks_exact.txt", "ABCDE");
  const auto task = make_task("charlm", {{"corpus", path}});
  ag::Rng rng(0);
  const Batch batch = task->sample(3, 4, rng);
  for (std::int64_t b = 0; b < 3; ++b)
    for (std::int64_t t = 0; t < 4; ++t) {
      EXPECT_EQ(at(batch.inputs, b, t), t);
      EXPECT_EQ(at(batch.targets, b, t), t + 1);
    }
  expect_error_mentioning([&] { task->sample(1, 5, rng); }, {"charlm", "6", "5", path});
}

TEST(Tasks, CharLMTokenTextEscapesUnprintableBytes) {
  const auto path = write_temp_file("pe_tasks_bytes.txt", std::string("\t\x01z\xC3", 4));
  const auto task = make_task("charlm", {{"corpus", path}});
  ASSERT_EQ(task->vocab_size(), 4);
  EXPECT_EQ(task->token_text(0), "\\x01");
  EXPECT_EQ(task->token_text(1), "\\t");
  EXPECT_EQ(task->token_text(2), "z");
  EXPECT_EQ(task->token_text(3), "\\xC3");
}

TEST(Tasks, CharLMDefaultCorpusLoads) {
  if (!std::filesystem::exists(kDefaultCorpus)) GTEST_SKIP() << kDefaultCorpus << " is absent";
  const auto task = make_task("charlm");
  EXPECT_NE(task->description().find(kDefaultCorpus), std::string::npos);
  EXPECT_GT(task->vocab_size(), 26);
  EXPECT_LE(task->vocab_size(), 256);
  ag::Rng rng(0);
  const Batch batch = task->sample(8, 128, rng);
  for (std::int64_t b = 0; b < 8; ++b)
    for (std::int64_t t = 0; t + 1 < 128; ++t)
      ASSERT_EQ(at(batch.targets, b, t), at(batch.inputs, b, t + 1));
}

TEST(Tasks, CharLMMissingCorpusNamesThePath) {
  const std::string path = ::testing::TempDir() + "pe_tasks_no_such_file.txt";
  std::filesystem::remove(path);
  expect_error_mentioning([&] { make_task("charlm", {{"corpus", path}}); }, {path});
}

TEST(Tasks, CharLMRejectsACorpusShorterThanTwoCharacters) {
  for (const char* contents : {"", "x"}) {
    const auto path = write_temp_file("pe_tasks_tiny.txt", contents);
    expect_error_mentioning([&] { make_task("charlm", {{"corpus", path}}); }, {path, "at least 2"});
  }
}
