// One way for every program of the book to read its command line: CLI11, so that each
// program has --help, and an unknown option or a bad value gets one line on stderr and exit
// status 2. Header-only, so that chapter 0 can use it while depending on the framework only.
#pragma once
#include <CLI/CLI.hpp>
#include <charconv>
#include <iostream>
#include <optional>
#include <string>

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

/// Reads argv into the options declared on `app` (and runs the callbacks of the subcommands
/// it names). Returns the status to exit with at once: 0 after --help, 2 after a mistake
/// (said in one line that names the program); nothing when the program should go on.
/// Exceptions thrown by callbacks pass through.
inline std::optional<int> parse_command_line(CLI::App& app, int argc, char** argv) {
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
