// The frame around the body of every program of the book (pe, the chapters' experiments, the
// benchmarks): one exit status per kind of outcome, one line on stderr for each failure, and
// standard output checked before the program says it is done. Without the check, `pe eval
// --json > full/eval.json` on a full disk left an empty file and exit status 0: the C library
// keeps a failed write's error in stdout's flag, and nobody looked at it.
//
//   0  done
//   1  the work failed: a damaged or unreadable file, a full disk, memory, training diverging,
//      standard output that cannot be written, an output folder that holds another run (the
//      state of the disk, which --overwrite changes) or that another process is writing
//   2  the command line is wrong: an unknown or repeated option, a bad value, a file named
//      on it that does not exist, an unknown encoding, task or option name, a configuration
//      that cannot be trained as given (anything found before the work starts; UsageError)
//
// Header only, like command_line.hpp, so that chapter 0 can use it with the framework alone.
#pragma once
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <new>
#include <string>
#include <type_traits>
#include <utility>

#include "ag/error.hpp"

namespace pe {

/// The exit statuses of every program of the book (the table above, README.md and
/// `pe --help` say the same).
enum ExitStatus : int { kExitDone = 0, kExitWorkFailed = 1, kExitUsage = 2 };

/// A mistake on the command line found after the options were read (an unknown encoding or
/// task name, a repeated key=value, a configuration that cannot be trained): exit status 2.
class UsageError : public ag::Error {
 public:
  using ag::Error::Error;
};

/// Runs `check` (code that only checks what the command line asked for) and returns what it
/// returns, turning any ag::Error it throws into a UsageError with the same message.
template <class Check>
decltype(auto) as_usage_error(Check&& check) {
  try {
    return std::forward<Check>(check)();
  } catch (const UsageError&) {
    throw;
  } catch (const ag::Error& e) {
    throw UsageError(e.what());
  }
}

/// The errno of a write to standard output that failed where the C library could not see it
/// (StdoutCapture's copy to the real stdout); 0 when none did.
inline std::atomic<int>& hidden_stdout_error() {
  static std::atomic<int> error{0};
  return error;
}

/// Why standard output could not be written, or "" when everything written so far reached it.
/// Flushes std::cout and stdout, then looks at std::cout's badbit, stdout's error flag and
/// hidden_stdout_error(). The reason is strerror's ("No space left on device") when the
/// failing write is known, "an earlier write failed" otherwise.
inline std::string stdout_failure() {
  // A write that failed earlier left its reason in errno unless a later call replaced it: kept
  // when it is one a write gives, as the next best thing to a reason recorded when it failed.
  const int earlier = errno;
  const bool write_reason = earlier == ENOSPC || earlier == EIO || earlier == EPIPE ||
                            earlier == EFBIG || earlier == EDQUOT || earlier == EBADF;
  errno = 0;
  std::cout.flush();
  int reason = std::cout.bad() && errno != 0 ? errno : 0;
  if (std::fflush(stdout) != 0 && errno != 0) reason = errno;
  const bool failed = std::cout.bad() || std::ferror(stdout) || hidden_stdout_error() != 0;
  if (!failed) return "";
  if (reason == 0) reason = hidden_stdout_error();
  if (reason == 0 && write_reason) reason = earlier;
  return reason != 0 ? std::strerror(reason) : "an earlier write failed";
}

/// Whether `reason` is a reader that went away (`pe inspect ... | head -1` where SIGPIPE is
/// ignored): the program stops quietly, as SIGPIPE would have stopped it.
inline bool reader_went_away(const std::string& reason) { return reason == std::strerror(EPIPE); }

/// Writes `text` to standard output at once (for a command's one large result, such as pe
/// inspect's JSON), keeping the reason when the write fails, for the frame's message.
inline void write_stdout(const std::string& text) {
  std::cout.flush();
  if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::fflush(stdout) != 0) {
    const int reason = errno != 0 ? errno : EIO;
    int none = 0;
    hidden_stdout_error().compare_exchange_strong(none, reason);
  }
}

/// Throws ag::Error when standard output could not be written: for a command that writes a
/// lot, so that it stops as soon as a write fails rather than at its end.
inline void check_stdout() {
  const std::string reason = stdout_failure();
  if (!reason.empty()) throw ag::Error("cannot write to standard output: " + reason);
}

/// Runs `body` (which returns the exit status: 0, or 2 after a command-line mistake CLI11
/// found) as the program `program`, and turns what goes wrong into one line on stderr that
/// starts with `program` and an exit status from the table above:
/// - a UsageError: 2; std::bad_alloc: 1, "ran out of memory while <doing()>" and `memory_help`;
///   any other std::exception: 1;
/// - then, whatever the status, standard output is checked (stdout_failure): a write that
///   failed is 1 with "cannot write to standard output: <reason>", quietly when the reader
///   went away.
/// `doing` is called only after a std::bad_alloc: it says what the program was doing
/// ("training (pe train)").
template <class Body, class Doing>
int run_program(const std::string& program, Body&& body, Doing&& doing,
                const std::string& memory_help) {
  int status = kExitWorkFailed;
  bool said = false;  // the body's error was already about standard output (check_stdout)
  try {
    status = std::forward<Body>(body)();
  } catch (const UsageError& e) {
    std::cerr << program << ": " << e.what() << "\n";
    status = kExitUsage;
  } catch (const std::bad_alloc&) {
    std::cerr << program << ": ran out of memory while " << doing() << "; " << memory_help << "\n";
    status = kExitWorkFailed;
  } catch (const std::exception& e) {
    const std::string message = e.what();
    said = message.rfind("cannot write to standard output: ", 0) == 0;
    if (!said || !reader_went_away(message.substr(message.find(": ") + 2)))
      std::cerr << program << ": " << message << "\n";
    status = kExitWorkFailed;
  }
  const std::string reason = stdout_failure();
  if (reason.empty()) return status;
  if (!said && !reader_went_away(reason))
    std::cerr << program << ": cannot write to standard output: " << reason << "\n";
  return status == kExitDone ? kExitWorkFailed : status;
}

/// run_program for a program that has a single thing to do (`doing`, "running the
/// experiment"), with the general advice on memory.
template <class Body>
int run_program(const std::string& program, Body&& body, const std::string& doing = "running") {
  return run_program(
      program, std::forward<Body>(body), [doing] { return doing; },
      "close other programs, or ask for less work (fewer or shorter runs)");
}

}  // namespace pe
