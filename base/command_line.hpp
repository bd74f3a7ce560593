// One way for every program of the book to read its command line: CLI11, so that each
// program has --help, and an unknown option or a bad value gets one line on stderr and exit
// status 2. Header-only, so that chapter 0 can use it while depending on the framework only.
#pragma once
#include <CLI/CLI.hpp>
#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>
#include <thread>
#ifdef __linux__
#include <sched.h>
#include <unistd.h>
#endif

#include "ag/threads.hpp"
#include "base/option_numbers.hpp"

namespace pe {

/// The processors this process may run on (its affinity mask on Linux, the machine's count
/// elsewhere), at least 1.
inline unsigned usable_cores() {
#ifdef __linux__
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
    return unsigned(CPU_COUNT(&set));
#endif
  return std::max(1u, std::thread::hardware_concurrency());
}

/// Prepares OpenMP's environment before its threads start, then (on Linux) starts the program
/// again with it when it changed, since libgomp reads its environment once, when it is loaded:
/// - OMP_NUM_THREADS above the cores this process can use is capped to them, with a note
///   (100000 made libgomp crash creating its team); a value that is not a positive whole
///   number is dropped with a note, so every kernel runs with the default.
/// - OMP_WAIT_POLICY=passive, unless the environment already chooses a policy (it or
///   GOMP_SPINCOUNT): waiting threads sleep instead of spinning, since two programs whose
///   threads spin on two cores slowed each other's steps 3-4x.
/// Where the program cannot start itself again, the capped count is set for this thread
/// through ag::set_max_threads.
inline void prepare_threads([[maybe_unused]] char** argv) {
  bool changed = false;
  int capped = 0;
  if (const char* text = std::getenv("OMP_NUM_THREADS")) {
    // OpenMP takes a list for nested levels, "4,2": the first number is the team of the
    // program's own parallel loops, and the one checked here.
    const std::string value(text), first = value.substr(0, value.find(','));
    unsigned long long threads = 0;
    const auto [end, error] = std::from_chars(first.data(), first.data() + first.size(), threads);
    const unsigned cores = usable_cores();
    if (error == std::errc::result_out_of_range ||
        (error == std::errc() && end == first.data() + first.size() && threads > cores)) {
      std::cerr << "note: OMP_NUM_THREADS=" << value << " is more than the " << cores
                << " cores this program can use; using " << cores << "\n";
      setenv("OMP_NUM_THREADS", std::to_string(cores).c_str(), 1);
      capped = int(cores);
      changed = true;
    } else if (error != std::errc() || end != first.data() + first.size() || threads == 0) {
      // libgomp reads OMP_NUM_THREADS when it is loaded, before main, and has already said
      // "Invalid value for environment variable OMP_NUM_THREADS" for most such values: no
      // code of a program runs before a library it links, so this note names that line as
      // its own subject, and the program started again below runs without the value.
      std::cerr << "note: OMP_NUM_THREADS='" << value << "' is not a positive whole number"
#ifdef _OPENMP
                << " (OpenMP's warning above, if it printed one, is about this value)"
#endif
                << "; it is ignored and every core is used: unset it or give a number such "
                   "as OMP_NUM_THREADS="
                << usable_cores() << "\n";
      unsetenv("OMP_NUM_THREADS");
      changed = true;
    }
  }
  if (!std::getenv("OMP_WAIT_POLICY") && !std::getenv("GOMP_SPINCOUNT")) {
    setenv("OMP_WAIT_POLICY", "passive", 1);
    changed = true;
  }
#ifdef __linux__
  if (changed) execv("/proc/self/exe", argv);  // returns only if it failed: go on as we are
#endif
  if (capped > 0) ag::set_max_threads(capped);
}

/// "--steps: At Most 1 required but received 2" (CLI11's words for an option given twice), in
/// plain words; any other message as it is.
inline std::string plain_error(const std::string& message) {
  const std::string at_most = ": At Most 1 required but received ";
  const auto at = message.find(at_most);
  if (at == std::string::npos) return message;
  return message.substr(0, at) + " was given " + message.substr(at + at_most.size()) +
         " times; give it once";
}

/// Reads argv into the options declared on `app` (and runs the callbacks of the subcommands
/// it names). First prepares OpenMP's threads (prepare_threads). Returns the status to exit
/// with at once: 0 after --help, 2 (kExitUsage, program_frame.hpp) after a mistake (said in
/// one line that names the program); nothing when the program should go on.
/// Exceptions thrown by callbacks pass through, to the program's frame (run_program).
inline std::optional<int> parse_command_line(CLI::App& app, int argc, char** argv) {
  prepare_threads(argv);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // One line, not CLI11's usage dump: the error and where to look ("pe train --help").
    std::string where = app.get_name();
    for (const CLI::App* sub = &app; !sub->get_subcommands().empty();) {
      sub = sub->get_subcommands().back();
      where += " " + sub->get_name();
    }
    std::cerr << app.get_name() << ": " << plain_error(e.what()) << " (see " << where
              << " --help)\n";
    return 2;
  }
  return std::nullopt;
}

}  // namespace pe
