// The chapters' experiment programs check their options and folders as pe does: numbers as
// written (ch00_experiment --steps had no upper bound), an empty value refused, the summary's
// path checked before any training (it used to be made, or to fail after training), one
// writer per output folder, and a finished run never replaced by one of another
// configuration unasked.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "programs/pe/tests/run_pe.hpp"

#if !defined(CH00_BINARY) || !defined(CH01_BINARY) || !defined(CH02_BINARY)
#error "CH00_BINARY, CH01_BINARY and CH02_BINARY must name chapters 0, 1 and 2's experiments"
#endif

namespace fs = std::filesystem;

namespace {

using pe_test::expect_one_line_error;
using pe_test::Outcome;
using pe_test::run_program;

std::string temp_dir(const std::string& name) { return pe_test::fresh_dir("pe_chapters_" + name); }

// What `program <args>` printed on stdout alone, split into lines (its stderr is dropped).
std::vector<std::string> stdout_lines(const std::string& program, const std::string& args) {
  FILE* pipe = popen((program + " " + args + " 2>/dev/null").c_str(), "r");
  std::vector<std::string> lines;
  if (!pipe) return lines;
  std::string text;
  char buffer[4096];
  while (std::fgets(buffer, sizeof buffer, pipe)) text += buffer;
  pclose(pipe);
  for (std::size_t begin = 0; begin < text.size();) {
    const std::size_t end = std::min(text.find('\n', begin), text.size());
    lines.push_back(text.substr(begin, end - begin));
    begin = end + 1;
  }
  return lines;
}

nlohmann::json read_json(const std::string& path) {
  std::ifstream file(path);
  return nlohmann::json::parse(file);
}

}  // namespace

// Chapters 0 and 1 train nothing of the lab's, yet their text quotes their runs like the others:
// the summary holds exactly what they printed, the numbers the text names, and the commit.
TEST(CliChapters, ChaptersZeroAndOneSummariesHoldWhatTheyPrinted) {
  const std::string dir = temp_dir("summaries");
  const auto printed0 =
      stdout_lines(CH00_BINARY, "--steps 20 --out " + dir + "/ch00 --summary " + dir + "/0.json");
  const nlohmann::json zero = read_json(dir + "/0.json");
  EXPECT_EQ(zero["output"].get<std::vector<std::string>>(), printed0);
  EXPECT_EQ(zero["steps"], 20);
  EXPECT_TRUE(zero["history"].contains("20") && zero["history"]["20"].contains("loss"));
  EXPECT_TRUE(zero["differences"]["1e-06"].contains("float64"));
  EXPECT_FALSE(zero["versions"]["git_commit"].get<std::string>().empty());

  const auto printed1 =
      stdout_lines(CH01_BINARY, "--trials 3 --summary " + dir + "/ch01/summary.json");
  const nlohmann::json one = read_json(dir + "/ch01/summary.json");  // its folder is made
  EXPECT_EQ(one["output"].get<std::vector<std::string>>(), printed1);
  EXPECT_LT(one["sentences"]["no_mask"]["difference"].get<double>(), 1e-5);  // round-off
  EXPECT_GT(one["sentences"]["causal"]["difference"].get<double>(), 0.1);    // order matters
  EXPECT_EQ(one["trials"], 3);
  expect_one_line_error(run_program(CH01_BINARY, "--summary ''"),
                        "--summary: expected a file, got ''");
}

TEST(CliChapters, NumbersAreCheckedAsWritten) {
  const std::string out = " --out " + temp_dir("numbers") + "/out";
  const std::vector<std::tuple<std::string, std::string, std::string>> cases = {
      {CH00_BINARY, "--steps 99999999999",
       "--steps: expected a whole number from 1 to 1000000, got '99999999999'"},
      {CH00_BINARY, "--seed -1",
       "--seed: expected a whole number from 0 to 18446744073709551615, got '-1'"},
      {CH00_BINARY, "--steps ''", "--steps: expected a whole number from 1 to 1000000, got ''"},
      {CH02_BINARY, "--steps 99999999999",
       "--steps: expected a whole number from 1 to 1000000000, got '99999999999'"},
      {CH02_BINARY, "--seed 18446744073709551616",
       "--seed: expected a whole number from 0 to 18446744073709551615, got "
       "'18446744073709551616'"},
      {CH02_BINARY, "--steps 5 --steps 6", "--steps was given 2 times; give it once"},
  };
  for (const auto& [program, args, error] : cases) {
    const Outcome o = run_program(program, args + out);
    expect_one_line_error(o, error, args);
    EXPECT_EQ(o.exit_code, 2) << args;
  }
}

// An empty --out or --summary was the default folder, or a folder made by mistake; a
// --summary into a missing folder was made, and into a folder failed only after training.
TEST(CliChapters, OutputPathsAreCheckedBeforeAnyWork) {
  const std::string dir = temp_dir("paths"), out = dir + "/out";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--out ''", "--out: expected a folder, got ''"},
      {"--out " + out + " --summary ''", "--summary: expected a file, got ''"},
      {"--out " + out + " --summary " + dir + "/missing/summary.json",
       "--summary: cannot write '" + dir + "/missing/summary.json': folder '" + dir +
           "/missing' does not exist"},
      {"--out " + out + " --summary " + dir,
       "--summary: cannot write '" + dir + "': it is a folder"},
  };
  for (const auto& [args, error] : cases) {
    expect_one_line_error(run_program(CH02_BINARY, "--steps 2 " + args), error, args);
    EXPECT_FALSE(fs::exists(out)) << args << ": nothing may be made before the checks";
    EXPECT_FALSE(fs::exists(dir + "/missing")) << args;
  }
  expect_one_line_error(run_program(CH00_BINARY, "--out ''"), "--out: expected a folder, got ''");
}

// A second chapter program on a folder that one is writing is refused at once, naming it.
TEST(CliChapters, SecondWriterOfAFolderIsRefused) {
  const std::string out = temp_dir("two_writers") + "/out";
  const pid_t holder = fork();
  if (holder == 0) {
    const int null = ::open("/dev/null", O_WRONLY);
    dup2(null, 1);
    dup2(null, 2);
    execl(CH00_BINARY, CH00_BINARY, "--steps", "1000000", "--out", out.c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }
  bool locked = false;
  for (int i = 0; i < 2000 && !locked; ++i) {
    std::ifstream in(out + "/.lock");
    const std::string text{std::istreambuf_iterator<char>(in), {}};
    locked = text == std::to_string(holder) + "\n";
    if (!locked) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_TRUE(locked) << "the first program never took the lock";
  expect_one_line_error(run_program(CH00_BINARY, "--out " + out),
                        "ch00_experiment: the output folder '" + out +
                            "' is being written by another process (pid " + std::to_string(holder) +
                            ")");
  expect_one_line_error(run_program(CH02_BINARY, "--steps 2 --out " + out),
                        "(pid " + std::to_string(holder) + ")");
  kill(holder, SIGKILL);
  waitpid(holder, nullptr, 0);
}

// A chapter's runs of another --steps are refused before any of them trains, naming what
// differs; --overwrite replaces them, and --retrain alone does not.
TEST(CliChapters, FinishedRunsOfAnotherConfigurationAreKeptUnlessOverwrite) {
  const std::string out = temp_dir("overwrite") + "/out";
  const Outcome first = run_program(CH02_BINARY, "--steps 2 --out " + out);
  ASSERT_EQ(first.exit_code, 0) << first.output;
  std::ifstream in(out + "/shiftk/run.json");
  const std::string before{std::istreambuf_iterator<char>(in), {}};
  for (const std::string args : {"--steps 3", "--steps 3 --retrain"}) {
    // The chapter's own figures come first (no run is trained before the check): the error
    // is the last line.
    const Outcome o = run_program(CH02_BINARY, args + " --out " + out);
    EXPECT_EQ(o.exit_code, 1) << args << ": " << o.output;
    EXPECT_EQ(o.last_line(), "ch02_experiment: run: the output folder '" + out +
                                 "/shiftk' holds a finished run of another configuration (steps: "
                                 "2 there, 3 here); add --overwrite to replace it, or choose "
                                 "another folder")
        << o.output;
    EXPECT_EQ(o.output.find("training into"), std::string::npos) << o.output;
  }
  std::ifstream again(out + "/shiftk/run.json");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(again), {}), before);
  const Outcome replaced = run_program(CH02_BINARY, "--steps 3 --overwrite --out " + out);
  EXPECT_EQ(replaced.exit_code, 0) << replaced.output;
}
