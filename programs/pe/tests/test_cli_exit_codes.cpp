// One exit status per kind of outcome across pe and the chapters' programs (README.md, `pe
// --help`, base/program_frame.hpp): 2 for a command line that is wrong, found before any work,
// 1 for work that failed. Before, an unknown encoding was 1 and an unknown option 2; a repeated
// -o key kept its last value silently; chapters 2-8 refused seeds that pe took.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "programs/pe/tests/run_pe.hpp"

namespace fs = std::filesystem;

namespace {

using pe_test::expect_one_line_error;
using pe_test::kTinyTrain;
using pe_test::Outcome;
using pe_test::run;
using pe_test::run_program;

}  // namespace

// Mistakes of the command line that only the command itself can see (names, key=value pairs,
// a configuration that cannot be trained) are 2, like the ones CLI11 sees; nothing is made.
TEST(CliExitCodes, CommandLineMistakesAreTwo) {
  const std::string dir = pe_test::fresh_dir("pe_cli_exit_codes"), out = " --out " + dir + "/run";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"nosuch", "pe: unknown command 'nosuch'"},
      {kTinyTrain + " --layers 1 --layers 2" + out, "--layers was given 2 times; give it once"},
      {kTinyTrain + " -e nosuch" + out, "unknown encoding 'nosuch'"},
      {kTinyTrain + " -t nosuch" + out, "unknown task 'nosuch'"},
      {kTinyTrain + " -e rope -o nosuch=1" + out, "nosuch"},
      {kTinyTrain + " -e rope -o base=2 -o base=3" + out,
       "pe: --option base was given twice ('2', then '3'); give it once"},
      {kTinyTrain + " --task-option k=1 --task-option k=2" + out,
       "pe: --task-option k was given twice ('1', then '2'); give it once"},
      {kTinyTrain + " -o novalue" + out, "--option expects key=value, got 'novalue'"},
      {kTinyTrain + " --heads 3" + out, "width 16"},
      {"train --quiet --resume " + dir + "/nowhere.agt", "nowhere.agt"},
      {"inspect nosuch", "unknown encoding 'nosuch'"},
      {"inspect rope --dim 4 -o base=2 -o base=3", "--option base was given twice"},
      {"inspect rope --dim 4 --vector 1,nan,0,0",
       "pe: --vector: expected a finite number, got 'nan'"},
      {"table --encodings none,nosuch --tasks shiftk --steps 2 --out " + dir + "/t",
       "unknown encoding 'nosuch'"},
      {"table --encodings none,none --tasks shiftk --steps 2 --out " + dir + "/t", "twice"},
  };
  for (const auto& [args, error] : cases) {
    const Outcome o = run(args);
    expect_one_line_error(o, error, args);
    EXPECT_EQ(o.exit_code, 2) << args << ": " << o.output;
  }
  EXPECT_FALSE(fs::exists(dir + "/run"));
  EXPECT_FALSE(fs::exists(dir + "/t"));
  const Outcome help = run("--help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.output.find("Exit status: 0 done; 1 the work failed"), std::string::npos)
      << help.output;
}

// Work that fails is 1: a damaged checkpoint (here: not a checkpoint at all).
TEST(CliExitCodes, FailedWorkIsOne) {
  const std::string dir = pe_test::fresh_dir("pe_cli_exit_codes_work");
  const std::string junk = dir + "/junk.agt";
  std::FILE* file = std::fopen(junk.c_str(), "w");
  ASSERT_NE(file, nullptr);
  std::fputs("not a checkpoint\n", file);
  std::fclose(file);
  for (const std::string& args : {"eval " + junk, "heatmap " + junk + " --out " + dir + "/h.png"}) {
    const Outcome o = run(args);
    EXPECT_EQ(o.exit_code, 1) << args << ": " << o.output;
    EXPECT_EQ(o.lines(), 1) << args << ": " << o.output;
  }
}

// A link that leads nowhere was "File does not exist", and the student looked for a file.
TEST(CliExitCodes, ALinkThatLeadsNowhereIsNamedSo) {
  const std::string dir = pe_test::fresh_dir("pe_cli_exit_codes_links");
  std::error_code error;
  fs::create_symlink(dir + "/loop.agt", dir + "/loop.agt", error);
  if (error) GTEST_SKIP() << "cannot make a symbolic link here: " << error.message();
  fs::create_symlink(dir + "/missing.agt", dir + "/dangling.agt");
  for (const std::string name : {"loop.agt", "dangling.agt"}) {
    const Outcome o = run("eval " + dir + "/" + name);
    expect_one_line_error(
        o, "'" + dir + "/" + name + "' is a link that leads nowhere (a loop or a missing target)");
    EXPECT_EQ(o.exit_code, 2) << o.output;
  }
  expect_one_line_error(run("eval " + dir), "is a folder, not a file");
}

// One seed range everywhere: 0 .. 2^64 - 1 in pe and in every chapter. A valid seed passes the
// command line, so the run stops at the next check (a summary into a missing folder, 2).
TEST(CliExitCodes, EveryProgramTakesTheSameSeeds) {
  const std::string dir = pe_test::fresh_dir("pe_cli_exit_codes_seeds");
  const std::string missing = " --summary " + dir + "/missing/s.json --out " + dir + "/out";
  for (const char* seed : {"0", "18446744073709551615"}) {
    const Outcome o = run_program(CH02_BINARY, std::string("--seed ") + seed + missing);
    expect_one_line_error(o, "--summary: cannot write", seed);
    EXPECT_EQ(o.exit_code, 2) << o.output;
  }
  const std::string beyond =
      "--seed: expected a whole number from 0 to 18446744073709551615, got '18446744073709551616'";
  for (const std::string& program : {std::string(CH00_BINARY), std::string(CH02_BINARY)}) {
    const Outcome o = run_program(program, "--seed 18446744073709551616 --out " + dir + "/o");
    expect_one_line_error(o, beyond, program);
    EXPECT_EQ(o.exit_code, 2) << o.output;
  }
  expect_one_line_error(run(kTinyTrain + " --seed 18446744073709551616"), beyond);
  EXPECT_FALSE(fs::exists(dir + "/out"));
}

// libgomp warns about OMP_NUM_THREADS=abc as it is loaded, before any of pe's code can run;
// pe's note comes after it and says that it is about the same value.
TEST(CliExitCodes, ThreadCountThatIsNoNumberGetsOneCoherentNote) {
  setenv("OMP_NUM_THREADS", "abc", 1);
  const Outcome o = run("list");
  unsetenv("OMP_NUM_THREADS");
  EXPECT_EQ(o.exit_code, 0) << o.output;
  const auto note = o.output.find("note: OMP_NUM_THREADS='abc' is not a positive whole number");
  ASSERT_NE(note, std::string::npos) << o.output;
  const auto warning = o.output.find("OMP_NUM_THREADS");
  if (warning < note) {  // libgomp's own line came first: the note must say it is the same
    EXPECT_NE(o.output.find("warning above", note), std::string::npos) << o.output;
  }
  EXPECT_NE(o.output.find("every core is used"), std::string::npos) << o.output;
}

// Memory that runs out despite the estimate (here: an address-space limit far below the
// machine's memory) was "pe: std::bad_alloc"; it is one line that says what pe was doing and
// what to change, exit status 1.
TEST(CliExitCodes, RunningOutOfMemoryIsOneLineThatSaysWhatToDo) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer reserves more address space than the limit allows";
#endif
  const Outcome o = run_program("ulimit -v 600000 && " + std::string(PE_BINARY),
                                "inspect learned --length 20000 --dim 4096 --heads 1");
  expect_one_line_error(o,
                        "pe: ran out of memory while computing the encoding's quantities "
                        "(pe inspect); give a shorter --length");
  EXPECT_NE(o.output.find("PE_MEMORY_LIMIT_BYTES"), std::string::npos) << o.output;
  EXPECT_EQ(o.exit_code, 1) << o.output;
}
