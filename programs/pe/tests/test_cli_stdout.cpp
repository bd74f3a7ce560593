// Standard output that cannot be written is a failure: `pe eval --json > full/eval.json` left
// an empty file with exit status 0. Every command of pe and every chapter's program runs here
// with its standard output on /dev/full (every write fails with "No space left on device"):
// each exits 1 with one line on stderr. A reader that goes away (`pe inspect ... | head -1`)
// still stops pe quietly.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "programs/pe/tests/run_pe.hpp"

namespace fs = std::filesystem;

namespace {

using pe_test::kTinyTrain;
using pe_test::Outcome;
using pe_test::run;

const std::string kFullMessage = "cannot write to standard output: No space left on device";

// `program <args>` with its stdout on /dev/full: the exit status and what it printed on stderr.
Outcome run_into_full_disk(const std::string& program, const std::string& args) {
  return pe_test::run_shell(program + " " + args + " 2>&1 >/dev/full");
}

// The failure every case must give: exit status 1, and the last line of stderr the program's
// name and the reason (progress notes such as "summary of ... in" may come before it).
void expect_write_failure(const Outcome& o, const std::string& program, const std::string& what) {
  EXPECT_EQ(o.exit_code, 1) << what << ": " << o.output;
  EXPECT_EQ(o.last_line(), program + ": " + kFullMessage) << what << ": " << o.output;
}

bool dev_full_usable() {
  FILE* full = std::fopen("/dev/full", "w");
  if (!full) return false;
  std::fputs("x", full);
  const bool fails = std::fflush(full) != 0;
  std::fclose(full);
  return fails;
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, separator);)
    if (!part.empty()) parts.push_back(part);
  return parts;
}

}  // namespace

// Every command of pe, with output a little (list, --help) or a lot (inspect's 2000 positions:
// the JSON used to stop at 32 KB with status 0).
TEST(CliStdout, EveryPeCommandFailsOnAFullDisk) {
  if (!dev_full_usable()) GTEST_SKIP() << "no /dev/full that refuses writes here";
  const std::string dir = pe_test::fresh_dir("pe_cli_stdout");
  const Outcome trained = run(kTinyTrain + " --out " + dir + "/run");
  ASSERT_EQ(trained.exit_code, 0) << trained.output;
  const Outcome chars =
      run("train --task charlm --width 16 --ffn 32 --length 8 --batch 4 --steps 2 --warmup 1 "
          "--eval-every 2 --eval-sequences 8 --quiet --no-figures --out " +
          dir + "/char");
  ASSERT_EQ(chars.exit_code, 0) << chars.output;
  const std::string checkpoint = dir + "/run/checkpoint.agt";
  const std::vector<std::string> commands = {
      "--help",
      "train --help",
      "list",
      "inspect rope --length 2000 --dim 64",
      "inspect none --length 8",
      kTinyTrain + " --out " + dir + "/again",
      "eval " + checkpoint,
      "eval --json " + checkpoint,
      "heatmap " + checkpoint + " --out " + dir + "/h.png",
      "generate " + dir + "/char/checkpoint.agt --prompt ab --tokens 4",
      "export " + checkpoint + " --out " + dir + "/m.safetensors",
      "table --encodings none --tasks shiftk --steps 2 --out " + dir + "/table",
  };
  for (const auto& args : commands)
    expect_write_failure(run_into_full_disk(PE_BINARY, args), "pe", args);
}

// Every chapter's program (and appendix C's example): --help at least, and a cheap run of
// the ones that print as they work through the summary's copy of stdout (StdoutCapture).
TEST(CliStdout, EveryChapterProgramFailsOnAFullDisk) {
  if (!dev_full_usable()) GTEST_SKIP() << "no /dev/full that refuses writes here";
  const auto programs = split(PE_CHAPTER_PROGRAMS, ',');
  ASSERT_FALSE(programs.empty());
  for (const auto& program : programs) {
    const std::string name = fs::path(program).filename().string();
    expect_write_failure(run_into_full_disk(program, "--help"), name, name + " --help");
  }
  const std::string dir = pe_test::fresh_dir("pe_cli_stdout_chapters");
  expect_write_failure(run_into_full_disk(CH00_BINARY, "--steps 2 --out " + dir + "/ch00"),
                       "ch00_experiment", "ch00_experiment --steps 2");
  expect_write_failure(
      run_into_full_disk(CH01_BINARY, "--trials 1 --summary " + dir + "/ch01/summary.json"),
      "ch01_experiment", "ch01_experiment --trials 1");
}

// `pe inspect ... | head -1`: the reader goes away; SIGPIPE ends pe without a word, as it ends
// any program of a pipeline. Where SIGPIPE is ignored (some launchers do), the failed write
// ends it just as quietly, with status 1.
TEST(CliStdout, AReaderThatGoesAwayEndsPeQuietly) {
  for (const bool ignore_sigpipe : {false, true}) {
    int out[2], err[2];
    ASSERT_EQ(pipe(out), 0);
    ASSERT_EQ(pipe(err), 0);
    const pid_t pid = fork();
    if (pid == 0) {
      if (ignore_sigpipe) signal(SIGPIPE, SIG_IGN);
      dup2(out[1], 1);
      dup2(err[1], 2);
      close(out[0]);
      close(err[0]);
      execl(PE_BINARY, PE_BINARY, "inspect", "rope", "--length", "2000", "--dim", "64",
            static_cast<char*>(nullptr));
      _exit(127);
    }
    close(out[1]);
    close(err[1]);
    char first[16];
    ASSERT_GT(read(out[0], first, sizeof first), 0);
    close(out[0]);  // like head: read a little, then go away
    std::string stderr_text;
    char buffer[512];
    for (ssize_t n; (n = read(err[0], buffer, sizeof buffer)) > 0;) stderr_text.append(buffer, n);
    close(err[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    if (ignore_sigpipe) {
      EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1) << status;
    } else {
      EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGPIPE) << status;
    }
    EXPECT_EQ(stderr_text, "") << "SIGPIPE ignored: " << ignore_sigpipe;
  }
}
