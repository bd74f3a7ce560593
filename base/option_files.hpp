// The files a program of the book reads from its command line, checked before the work
// starts. CLI11's ExistingFile says "File does not exist" for a symbolic link whose target is
// missing or that leads back to itself, which sends the student looking for a file that is
// there: here such a link is named for what it is.
#pragma once
#include <CLI/CLI.hpp>
#include <filesystem>
#include <string>
#include <system_error>

namespace pe {

/// A file that exists and is no folder:
///   File does not exist: 'run/checkpoint.agt'
///   'run/checkpoint.agt' is a link that leads nowhere (a loop or a missing target)
///   'run' is a folder, not a file
inline CLI::Validator existing_file() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        namespace fs = std::filesystem;
        std::error_code error;
        const fs::file_status link = fs::symlink_status(text, error);
        const fs::file_status target = fs::status(text, error);
        if (fs::is_symlink(link) && !fs::exists(target))
          return "'" + text + "' is a link that leads nowhere (a loop or a missing target)";
        if (!fs::exists(target)) return "File does not exist: '" + text + "'";
        if (fs::is_directory(target)) return "'" + text + "' is a folder, not a file";
        return "";
      },
      "FILE");
}

}  // namespace pe
