// Runs the real `pe` binary as a reader would, for the command-line tests.
#pragma once
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <string>

#ifndef PE_BINARY
#error "PE_BINARY must name the pe executable"
#endif

namespace pe_test {

/// The tiny training run of the command-line tests: a few seconds, no figures.
inline const std::string kTinyTrain =
    "train --width 16 --ffn 32 --length 8 --batch 4 --steps 4 --warmup 1 --eval-every 2 "
    "--eval-sequences 8 --quiet --no-figures";

/// An empty folder `name` under the test's temporary directory (emptied if it exists).
inline std::string fresh_dir(const std::string& name) {
  const std::string dir = ::testing::TempDir() + name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

struct Outcome {
  int exit_code;  // -1 when the process died from a signal (a crash)
  std::string output;
  int lines() const { return int(std::count(output.begin(), output.end(), '\n')); }
  /// The last line printed: a failed command's one-line error, after any progress lines.
  std::string last_line() const {
    const std::size_t end = output.find_last_not_of('\n');
    if (end == std::string::npos) return "";
    const std::size_t start = output.rfind('\n', end);
    return output.substr(start == std::string::npos ? 0 : start + 1,
                         end - (start == std::string::npos ? 0 : start + 1) + 1);
  }
};

/// A refused command: a non-zero exit and one line of output that holds `fragment`
/// (`what` names the case in a failure message).
inline void expect_one_line_error(const Outcome& o, const std::string& fragment,
                                  const std::string& what = "") {
  EXPECT_GT(o.exit_code, 0) << what << ": " << o.output;
  EXPECT_EQ(o.lines(), 1) << what << ": " << o.output;
  EXPECT_NE(o.output.find(fragment), std::string::npos) << what << ": " << o.output;
}

/// A shell command's exit status and the output it sends into the pipe (the command says
/// which streams: "... 2>&1" joins stderr).
inline Outcome run_shell(const std::string& command) {
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return {-2, "popen failed"};
  Outcome outcome{0, ""};
  std::array<char, 4096> buffer;
  while (std::fgets(buffer.data(), buffer.size(), pipe)) outcome.output += buffer.data();
  const int status = pclose(pipe);
  outcome.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return outcome;
}

/// `program <args>` (any program of the build) with stderr joined to stdout.
inline Outcome run_program(const std::string& program, const std::string& args) {
  return run_shell(program + " " + args + " 2>&1");
}

/// `pe <args>` with stderr joined to stdout.
inline Outcome run(const std::string& args) { return run_program(PE_BINARY, args); }

/// Starts `pe <args>` in the background (output discarded); returns its process id, which
/// stays pe's own (sh execs it, and pe only ever execs itself again).
inline pid_t start(const std::string& args) {
  const std::string command = "exec " + std::string(PE_BINARY) + " " + args + " >/dev/null 2>&1";
  const pid_t pid = fork();
  if (pid == 0) {
    execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  return pid;
}

/// The exit status of a process started with start(), waiting for it; -1 after a signal.
inline int wait_for(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace pe_test
