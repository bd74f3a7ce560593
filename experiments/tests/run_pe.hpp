// Runs the real `pe` binary as a reader would, for the command-line tests.
#pragma once
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <string>

#ifndef PE_BINARY
#error "PE_BINARY must name the pe executable"
#endif

namespace pe_test {

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

/// `pe <args>` with stderr joined to stdout.
inline Outcome run(const std::string& args) {
  const std::string command = std::string(PE_BINARY) + " " + args + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return {-2, "popen failed"};
  Outcome outcome{0, ""};
  std::array<char, 4096> buffer;
  while (std::fgets(buffer.data(), buffer.size(), pipe)) outcome.output += buffer.data();
  const int status = pclose(pipe);
  outcome.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return outcome;
}

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
