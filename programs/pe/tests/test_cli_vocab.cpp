// A checkpoint carries what it needs to be read back: a charlm model keeps its corpus'
// characters and the text's hash, so that a corpus changed after training is refused with one
// line naming the file (issue 35), not read with another token mapping or blamed on the
// checkpoint. And configuration mistakes are refused before training, naming the option: a
// learned table shorter than --length, an odd --length for copy, a corpus shorter than one
// window, an encoding option over a checkpoint that would resize a parameter.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "programs/pe/tests/run_pe.hpp"

namespace {

using pe_test::expect_one_line_error;
using pe_test::Outcome;
using pe_test::run;

namespace fs = std::filesystem;

// A short text with a 'y' in it, repeated past any window the tests draw.
std::string sample_text() {
  std::string text;
  for (int i = 0; i < 20; ++i)
    text += "the quick brown fox jumps over the lazy dog; yes, yaks yawn.\n";
  return text;
}

void write(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

std::string replaced(std::string text, char from, char to) {
  for (char& c : text)
    if (c == from) c = to;
  return text;
}

// A charlm model trained for a few steps on `corpus`, in dir/run; returns its checkpoint.
std::string train_on(const std::string& dir, const std::string& corpus) {
  const Outcome o = run(pe_test::kTinyTrain + " --task charlm --task-option corpus=" + corpus +
                        " --out " + dir + "/run");
  EXPECT_EQ(o.exit_code, 0) << o.output;
  return dir + "/run/checkpoint.agt";
}

// Every command that reads a model back, on `checkpoint`; `dir` takes their outputs.
std::vector<std::pair<std::string, std::string>> readers(const std::string& dir,
                                                         const std::string& checkpoint) {
  return {{"eval", "eval " + checkpoint},
          {"generate", "generate " + checkpoint + " --prompt the --tokens 5"},
          {"heatmap", "heatmap " + checkpoint + " --out " + dir + "/heatmap.png"},
          {"export", "export " + checkpoint + " --out " + dir + "/export.agt"}};
}

TEST(CliVocab, CharactersReplacedAfterTrainingAreRefusedByEveryReader) {
  const std::string dir = pe_test::fresh_dir("pe_cli_vocab_replaced");
  const std::string corpus = dir + "/corpus.txt";
  write(corpus, sample_text());
  const std::string checkpoint = train_on(dir, corpus);
  // sed -i 's/y/~/g': as many characters, so the model would load and read '~' as 'z'.
  write(corpus, replaced(sample_text(), 'y', '~'));
  for (const auto& [what, args] : readers(dir, checkpoint)) {
    const Outcome o = run(args);
    expect_one_line_error(o, "the corpus '" + corpus + "' has changed since the model was trained",
                          what);
    EXPECT_NE(o.output.find("'~' new, 'y' missing"), std::string::npos) << what << ": " << o.output;
  }
  EXPECT_FALSE(fs::exists(dir + "/heatmap.png"));
  EXPECT_FALSE(fs::exists(dir + "/export.agt"));
  const Outcome resumed =
      run("train --resume " + checkpoint + " --steps 6 --out " + dir + "/resumed --quiet");
  expect_one_line_error(resumed, "the corpus '" + corpus + "' has changed", "resume");
  EXPECT_FALSE(fs::exists(dir + "/resumed")) << "a refused resume leaves no folder behind";
  // Put back, the same checkpoint reads again.
  write(corpus, sample_text());
  EXPECT_EQ(run("eval " + checkpoint).exit_code, 0);
}

TEST(CliVocab, ACorpusOfOtherSizeIsBlamedNotTheCheckpoint) {
  const std::string dir = pe_test::fresh_dir("pe_cli_vocab_size");
  const std::string corpus = dir + "/corpus.txt";
  write(corpus, sample_text());
  const std::string checkpoint = train_on(dir, corpus);
  write(corpus, sample_text() + "0123456789XYZ\n");
  const Outcome o = run("eval " + checkpoint);
  expect_one_line_error(o, "the corpus '" + corpus + "' has changed", "more characters");
  EXPECT_NE(o.output.find("'0', '1'"), std::string::npos) << o.output;
  EXPECT_EQ(o.output.find("tokens.weight"), std::string::npos) << o.output;
}

TEST(CliVocab, OtherTextOfTheSameCharactersEvaluatesButDoesNotResume) {
  const std::string dir = pe_test::fresh_dir("pe_cli_vocab_text");
  const std::string corpus = dir + "/corpus.txt";
  write(corpus, sample_text());
  const std::string checkpoint = train_on(dir, corpus);
  write(corpus, "yes " + sample_text());  // the same characters, another text
  for (const auto& [what, args] : readers(dir, checkpoint))
    EXPECT_EQ(run(args).exit_code, 0) << what;
  const Outcome resumed =
      run("train --resume " + checkpoint + " --steps 6 --out " + dir + "/resumed --quiet");
  expect_one_line_error(
      resumed, "the corpus '" + corpus + "' has changed since the checkpoint was saved", "resume");
  EXPECT_NE(resumed.output.find("another text"), std::string::npos) << resumed.output;
  EXPECT_FALSE(fs::exists(dir + "/resumed"));
}

TEST(CliVocab, InitTakesAnotherTextOnlyOfTheSameCharacters) {
  const std::string dir = pe_test::fresh_dir("pe_cli_vocab_init");
  const std::string corpus = dir + "/corpus.txt", same = dir + "/same.txt",
                    other = dir + "/other.txt";
  write(corpus, sample_text());
  write(same, "yes " + sample_text());
  write(other, replaced(sample_text(), 'y', '~'));
  const std::string checkpoint = train_on(dir, corpus);
  const std::string init = pe_test::kTinyTrain + " --task charlm --init " + checkpoint;
  const Outcome fine = run(init + " --task-option corpus=" + same + " --out " + dir + "/fine");
  EXPECT_EQ(fine.exit_code, 0) << fine.output;
  const Outcome refused =
      run(init + " --task-option corpus=" + other + " --out " + dir + "/refused");
  expect_one_line_error(
      refused,
      "the corpus '" + other + "' is not the text the model was trained on ('" + corpus + "')",
      "--init");
  EXPECT_NE(refused.output.find("--init"), std::string::npos) << refused.output;
  EXPECT_FALSE(fs::exists(dir + "/refused"));
}

TEST(CliVocab, ConfigurationMistakesAreRefusedBeforeTrainingNamingTheOption) {
  const std::string dir = pe_test::fresh_dir("pe_cli_vocab_config");
  const std::string tiny = dir + "/tiny.txt";
  write(tiny, "abcdef");
  const struct {
    std::string args, fragment;
  } cases[] = {
      {"-e learned -o max_len=4 --length 8",
       "--encoding learned with -o max_len=4 cannot read sequences of --length 8"},
      {"-e learned -o max_len=8 --length 8 --random-positions 16",
       "-o max_len=8 cannot read positions up to --random-positions 16"},
      {"--task copy --length 7", "task copy needs an even length, got 7"},
      {"--task charlm --length 8 --task-option corpus=" + tiny, "corpus '" + tiny + "' has only 6"},
  };
  // kTinyTrain without its --length, which each case sets.
  const std::string train =
      "train --width 16 --ffn 32 --batch 4 --steps 4 --warmup 1 --eval-every 2 "
      "--eval-sequences 8 --quiet --no-figures";
  for (const auto& c : cases) {
    const Outcome o = run(train + " " + c.args + " --out " + dir + "/run");
    expect_one_line_error(o, c.fragment, c.args);
    EXPECT_EQ(o.output.find("no checkpoint was saved"), std::string::npos) << o.output;
    EXPECT_FALSE(fs::exists(dir + "/run")) << c.args;
  }
}

TEST(CliVocab, AnOptionThatWouldResizeATrainedParameterIsNamed) {
  const std::string dir = pe_test::fresh_dir("pe_cli_vocab_resize");
  const Outcome trained = run(pe_test::kTinyTrain + " -e learned --out " + dir + "/run");
  ASSERT_EQ(trained.exit_code, 0) << trained.output;
  const std::string checkpoint = dir + "/run/checkpoint.agt";
  for (const std::string command : {"eval", "generate"}) {
    const std::string extra = command == "generate" ? " --prompt A --tokens 2" : "";
    const Outcome o = run(command + " " + checkpoint + extra + " -o max_len=64");
    expect_one_line_error(o,
                          "--option max_len=64 would change the model's parameter "
                          "'encoding.table' from [8, 16] to [64, 16]",
                          command);
    EXPECT_NE(o.output.find("was trained without max_len"), std::string::npos) << o.output;
  }
  // The value it was trained with changes nothing, so it is accepted.
  EXPECT_EQ(run("eval " + checkpoint + " -o max_len=8").exit_code, 0);
}

}  // namespace
