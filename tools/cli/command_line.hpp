// One way for every program of the book to read its command line: CLI11, so that each
// program has --help, and an unknown option or a bad value gets one line on stderr and exit
// status 2. Header-only, so that chapter 0 can use it while depending on the framework only.
#pragma once
#include <CLI/CLI.hpp>
#include <charconv>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>
#ifdef __linux__
#include <unistd.h>
#endif

namespace pe {

/// Accepts a whole number of at least `min` and nothing else: for min = 1, "0", "-3", "1.5",
/// "2x" and "" are refused with a message that says what was expected. (CLI11's
/// PositiveNumber prints the largest double instead, and an unsigned option takes "-1" as
/// 2^64 - 1.)
inline CLI::Validator integer_at_least(long long min) {
  return CLI::Validator(
      [min](std::string& text) -> std::string {
        long long value = 0;
        const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (error == std::errc() && end == text.data() + text.size() && value >= min) return "";
        return "expected a whole number of at least " + std::to_string(min) + ", got '" + text +
               "'";
      },
      min == 1 ? "POSITIVE" : ">=" + std::to_string(min));
}

/// Makes the OpenMP threads of this program sleep while they wait for work instead of
/// spinning (OMP_WAIT_POLICY=passive): two programs whose threads spin on two cores slowed
/// each other's steps 3-4x. libgomp reads its environment once, when it is loaded, before
/// main runs; so the program starts itself again with the setting, unless the environment
/// already chooses a policy (OMP_WAIT_POLICY or GOMP_SPINCOUNT), which is then kept.
inline void wait_without_spinning([[maybe_unused]] char** argv) {
#ifdef __linux__
  if (std::getenv("OMP_WAIT_POLICY") || std::getenv("GOMP_SPINCOUNT")) return;
  setenv("OMP_WAIT_POLICY", "passive", 1);
  execv("/proc/self/exe", argv);  // returns only if it failed: then go on as we are
#endif
}

/// Reads argv into the options declared on `app` (and runs the callbacks of the subcommands
/// it names). First makes OpenMP wait without spinning (wait_without_spinning). Returns the status to exit with at once: 0 after --help, 2 after a mistake
/// (said in one line that names the program); nothing when the program should go on.
/// Exceptions thrown by callbacks pass through.
inline std::optional<int> parse_command_line(CLI::App& app, int argc, char** argv) {
  wait_without_spinning(argv);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // One line, not CLI11's usage dump: the error and where to look.
    std::cerr << app.get_name() << ": " << e.what() << " (see " << app.get_name()
              << " --help)\n";
    return 2;
  }
  return std::nullopt;
}

}  // namespace pe
