// Every number on pe's command line is checked on the text as written, the same way in every
// command (base/option_numbers.hpp): no wrap-around (--seed -1 ran as 2^64 - 1), no saturation
// ("got 9223372036854775807"), no silent 0 or default for an empty value; and the other
// one-line errors of the second reliability round (issue 23, point 6), each as it was found.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "programs/pe/tests/run_pe.hpp"

namespace fs = std::filesystem;

namespace {

using pe_test::expect_one_line_error;
using pe_test::Outcome;
using pe_test::run;

std::string temp_dir(const std::string& name) { return pe_test::fresh_dir("pe_options_" + name); }

const std::string& kTiny = pe_test::kTinyTrain;

// A finished tiny run for the tests that read a checkpoint, one per test: ctest runs tests in
// parallel, each in a process of its own, and two of them must not share a folder.
const std::string& checkpoint() {
  static const std::string path = [] {
    const std::string dir =
        temp_dir(std::string("checkpoint_") +
                 ::testing::UnitTest::GetInstance()->current_test_info()->name());
    const Outcome o = run(kTiny + " --out " + dir);
    EXPECT_EQ(o.exit_code, 0) << o.output;
    return dir + "/checkpoint.agt";
  }();
  return path;
}

}  // namespace

// Each command refuses a bad number with "--option: expected ..., got '<as written>'", exit 2,
// before it reads a file or makes a folder.
TEST(CliOptions, EveryCommandChecksItsNumbersAsWritten) {
  const std::string dir = temp_dir("numbers"), out = " --out " + dir + "/run";
  const std::string ck = checkpoint();
  const std::string seed = "--seed: expected a whole number from 0 to 18446744073709551615, got ";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {kTiny + " --seed -1" + out, seed + "'-1'"},
      {kTiny + " --seed 18446744073709551616" + out, seed + "'18446744073709551616'"},
      {kTiny + " --seed 99999999999999999999999" + out, seed + "'99999999999999999999999'"},
      {"generate " + ck + " --prompt a --tokens 2 --seed -1", seed + "'-1'"},
      {"generate " + ck + " --prompt a --tokens 2 --seed 18446744073709551616",
       seed + "'18446744073709551616'"},
      {"generate " + ck + " --prompt a --tokens 2 --seed 99999999999999999999999",
       seed + "'99999999999999999999999'"},
      {"generate " + ck + " --prompt a --tokens 0",
       "--tokens: expected a whole number from 1 to 100000, got '0'"},
      {"generate " + ck + " --prompt a --tokens 2 --temperature nan",
       "--temperature: expected a finite number of at least 0, got 'nan'"},
      {"table --seed -1" + out, seed + "'-1'"},
      {"table --steps 99999999999999999999" + out,
       "--steps: expected a whole number from 0 to 1000000000, got '99999999999999999999'"},
      {"table --layers 1,x" + out, "--layers: expected a whole number from 1 to 64, got 'x'"},
      {"table --jobs -1" + out, "--jobs: expected a whole number from 0 to 1000000, got '-1'"},
      {"table --lengths 32,0" + out,
       "--lengths: expected a whole number from 1 to 100000, got '0'"},
      {"eval " + ck + " --lengths 8,-3",
       "--lengths: expected a whole number from 1 to 100000, got '-3'"},
      {"eval " + ck + " --sequences 1e3",
       "--sequences: expected a whole number from 1 to 1000000, got '1e3'"},
      {"heatmap " + ck + " --out " + dir + "/h.png --length 5000",
       "--length: expected a whole number from 1 to 4096, got '5000'"},
      {"inspect rope --dim 4 --vector 1,nan,0,0", "--vector: expected a finite number"},
      {"inspect rope --positions -1",
       "--positions: expected a whole number from 0 to 1000000, got '-1'"},
      {"inspect rope --length 0", "--length: expected a whole number from 1 to 100000, got '0'"},
      {kTiny + " --width 1.5" + out, "--width: expected a whole number from 1 to 8192, got '1.5'"},
      {kTiny + " --batch ' 4'" + out,
       "--batch: expected a whole number from 1 to 100000, got ' 4'"},
      {kTiny + " --lr 1e999" + out, "--lr: expected a finite number above 0, got '1e999'"},
      {kTiny + " --lr 0" + out, "--lr: expected a finite number above 0, got '0'"},
      {kTiny + " --clip -1" + out, "--clip: expected a finite number above 0, got '-1'"},
      {kTiny + " --save-every 2x" + out,
       "--save-every: expected a whole number from 0 to 1000000000, got '2x'"},
  };
  for (const auto& [args, error] : cases) {
    const Outcome o = run(args);
    expect_one_line_error(o, error, args);
    EXPECT_EQ(o.exit_code, 2) << args;
    EXPECT_NE(o.output.find("--help)"), std::string::npos) << args << ": " << o.output;
  }
  EXPECT_FALSE(fs::exists(dir + "/run"));
}

// An empty value is a mistake: --lr "" ran as "got 0", --out "" silently meant the default
// folder.
TEST(CliOptions, EmptyValuesAreMistakesNotDefaults) {
  const std::string dir = temp_dir("empty");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {kTiny + " --lr ''", "--lr: expected a finite number above 0, got ''"},
      {kTiny + " --steps ''", "--steps: expected a whole number from 0 to 1000000000, got ''"},
      {kTiny + " --seed ''",
       "--seed: expected a whole number from 0 to 18446744073709551615, got ''"},
      {kTiny + " --out ''", "--out: expected a folder, got ''"},
      {kTiny + " --encoding ''", "--encoding: expected a name, got ''"},
      {"table --out ''", "--out: expected a folder, got ''"},
      {"table --encodings ''", "--encodings: expected an encoding name, got ''"},
      {"heatmap " + checkpoint() + " --out ''", "--out: expected a PNG file, got ''"},
      {"eval " + checkpoint() + " --plot ''", "--plot: expected a PNG file, got ''"},
  };
  for (const auto& [args, error] : cases) expect_one_line_error(run(args), error, args);
}

// "--steps 5 --steps 6" said "At Most 1 required but received 2".
TEST(CliOptions, OptionGivenTwiceIsNamed) {
  expect_one_line_error(run(kTiny + " --steps 6 --out " + temp_dir("twice")),
                        "pe: --steps was given 2 times; give it once (see pe train --help)");
  expect_one_line_error(run("table --seed 1 --seed 2"), "--seed was given 2 times; give it once");
}

// A missing corpus said "cannot open charlm corpus file '/nonexistent': Success".
TEST(CliOptions, MissingCorpusSaysWhy) {
  const std::string out = temp_dir("corpus") + "/run";
  expect_one_line_error(
      run(kTiny + " --task charlm --task-option corpus=/nonexistent --out " + out),
      "cannot open charlm corpus file '/nonexistent': No such file or directory");
  EXPECT_FALSE(fs::exists(out));
}

// `pe inspect rope --length 100000 --dim 65536` ended in a bare std::bad_alloc: inspect now
// estimates its memory as training does, from the shapes of the encoding's own tables, so a
// [T, C] table and an [H, T, T] bias are both refused when they cannot fit, and a long
// sinusoid of a small width (a [T, C] table only) is not.
TEST(CliOptions, InspectEstimatesItsMemory) {
  setenv("PE_MEMORY_LIMIT_BYTES", "4000000000", 1);  // 4 GB, whatever this machine has
  const Outcome rope = run("inspect rope --length 100000 --dim 65536");
  const Outcome alibi = run("inspect alibi --length 100000 --heads 64");
  const Outcome sinusoid = run("inspect sinusoidal --length 20000 --dim 16");
  unsetenv("PE_MEMORY_LIMIT_BYTES");
  expect_one_line_error(rope,
                        "memory: inspecting rope at length 100000 and width 65536 needs about");
  expect_one_line_error(alibi, "memory: inspecting alibi at length 100000");
  EXPECT_EQ(sinusoid.exit_code, 0) << sinusoid.output.substr(0, 300);
}

// `pe heatmap` estimates the attention it draws too: a deep, many-headed model at its longest
// length is refused before anything is computed.
TEST(CliOptions, HeatmapEstimatesItsMemory) {
  setenv("PE_MEMORY_LIMIT_BYTES", "100000000", 1);  // 100 MB
  const Outcome o = run("heatmap " + checkpoint() + " --length 4096 --out " +
                        temp_dir("heatmap_memory") + "/h.png");
  unsetenv("PE_MEMORY_LIMIT_BYTES");
  expect_one_line_error(o, "memory: drawing the attention at length 4096 needs about");
}

// `eval -o nonexist=` was accepted: removing an option the checkpoint does not have is a
// typing mistake. (Setting one the encoding does not know was refused already.)
TEST(CliOptions, RemovingAnOptionTheCheckpointLacksIsRefused) {
  expect_one_line_error(run("eval " + checkpoint() + " -o nonexist="),
                        "--option nonexist= removes an encoding option, but '" + checkpoint() +
                            "' has no option 'nonexist' (its options: none)");
  expect_one_line_error(run("eval " + checkpoint() + " -o nonexist=1"), "has no option 'nonexist'");
}

// `inspect sinusoidal -o base=1` was accepted (every pair the same frequency) while RoPE
// refused it: both refuse a base of 1 or less.
TEST(CliOptions, SinusoidBaseOfOneIsRefusedAsRopesIs) {
  for (const char* encoding : {"sinusoidal", "rope"})
    for (const char* base : {"1", "0.5"})
      expect_one_line_error(run(std::string("inspect ") + encoding + " -o base=" + base),
                            std::string(encoding) + ": base must be greater than 1, got " + base);
}

// --random-positions L_MAX: a number of at least the training length, each mistake in one
// line before anything is written; a model trained so is evaluated as trained, and a length
// above L_MAX needs --contiguous.
TEST(CliOptions, RandomPositionsAreCheckedAndEvaluatedAsTrained) {
  const std::string dir = temp_dir("random_positions");
  expect_one_line_error(run(kTiny + " --random-positions abc --out " + dir + "/a"),
                        "--random-positions: expected a whole number from 0 to 100000, got 'abc'");
  expect_one_line_error(run(kTiny + " --random-positions 7 --out " + dir + "/b"),
                        "random_positions (L_max) 7 is shorter than the training length 8");
  EXPECT_FALSE(fs::exists(dir + "/a"));
  EXPECT_FALSE(fs::exists(dir + "/b"));
  const Outcome help = run("train --help");
  EXPECT_NE(help.output.find("--random-positions"), std::string::npos) << help.output;
  const Outcome trained = run(kTiny + " --random-positions 32 --out " + dir + "/run");
  ASSERT_EQ(trained.exit_code, 0) << trained.output;
  const std::string ck = dir + "/run/checkpoint.agt";
  EXPECT_EQ(run("eval " + ck + " --lengths 8,32").exit_code, 0);
  expect_one_line_error(run("eval " + ck + " --lengths 33"), "is longer than L_max = 32");
  const Outcome contiguous = run("eval " + ck + " --lengths 33 --contiguous");
  EXPECT_EQ(contiguous.exit_code, 0) << contiguous.output;
}
