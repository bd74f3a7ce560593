#include "base/build_record.hpp"

#include <cstdio>

#include "ag/simd.hpp"
#include "ag/threads.hpp"
#include "ag/versions.hpp"

#ifndef PE_SOURCE_DIR
#define PE_SOURCE_DIR ""
#endif
#ifndef PE_BUILD_TYPE
#define PE_BUILD_TYPE "unknown"
#endif
#ifndef PE_ARCH_NAME
#define PE_ARCH_NAME "unknown"
#endif
#ifndef PE_COMPILER
#define PE_COMPILER "unknown"
#endif

namespace pe {

namespace {

// What a shell command printed, without its last newline ("" when it could not run).
std::string output_of(const std::string& command) {
#if defined(__EMSCRIPTEN__)
  (void)command;
  return "";  // no processes in the browser
#else
  std::string output;
  if (FILE* pipe = popen(command.c_str(), "r")) {
    char buffer[256];
    while (std::fgets(buffer, sizeof buffer, pipe)) output += buffer;
    pclose(pipe);
  }
  while (!output.empty() && output.back() == '\n') output.pop_back();
  return output;
#endif
}

// The commit of the sources this program was built from, read from their git checkout, with
// "-dirty" when a tracked source or build file differs from it (results, figures and text are
// the runs' output and do not count). "unknown" outside a checkout or without git.
std::string read_source_commit() {
  std::string folder = PE_SOURCE_DIR;
  if (folder.empty()) return "unknown";
  std::string quoted = "'";  // for the shell: ' becomes '\''
  for (char c : folder) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  quoted += "'";
  const std::string git = "git -C " + quoted + " ";
  const std::string commit = output_of(git + "rev-parse --short HEAD 2>/dev/null");
  if (commit.empty()) return "unknown";
  const std::string changed =
      output_of(git +
                "status --porcelain --untracked-files=no -- '*.cpp' '*.hpp' '*.in' '*.cmake' "
                "'CMakeLists.txt' 'CMakePresets.json' 2>/dev/null");
  return changed.empty() ? commit : commit + "-dirty";
}

}  // namespace

const std::string& source_commit() {
  static const std::string commit = read_source_commit();
  return commit;
}

std::map<std::string, std::string> build_versions() {
  return {{"git_commit", source_commit()},
          {"compiler", PE_COMPILER},
          {"libraries", ag::library_versions()},
          {"threads", ag::has_threads() ? "OpenMP" : "none (built without OpenMP)"},
          {"build_type", PE_BUILD_TYPE},
          {"arch", PE_ARCH_NAME},           // what the build was compiled for
          {"simd", ag::simd_path_name()}};  // the kernels this machine ran: same path, same bits
}

}  // namespace pe
