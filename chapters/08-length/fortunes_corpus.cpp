#include "chapters/08-length/fortunes_corpus.hpp"

#include <algorithm>
#include <filesystem>
#include <unordered_set>

#include "ag/error.hpp"
#include "ag/files.hpp"

namespace pe {

namespace fs = std::filesystem;

namespace {

constexpr const char* kInstallHint =
    "install the Debian package 'fortunes' (scripts/install-deps.sh --corpus)";
constexpr std::uint64_t kMaxFortuneFileBytes = 16u << 20;  // the largest file is about 500 KB

}  // namespace

std::vector<std::string> fortune_files(const std::string& folder) {
  std::error_code error;
  ag::check(fs::is_directory(folder, error), "fortunes", "corpus folder '", folder,
            "' does not exist; ", kInstallHint);
  std::vector<std::string> files;
  for (const fs::directory_entry& entry : fs::directory_iterator(folder)) {
    if (entry.is_symlink() || !entry.is_regular_file()) continue;
    if (entry.path().extension() == ".dat") continue;
    files.push_back(entry.path().string());
  }
  ag::check(!files.empty(), "fortunes", "corpus folder '", folder,
            "' holds no plain fortune files; ", kInstallHint);
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<std::string> split_fortunes(const std::string& text) {
  std::vector<std::string> fortunes;
  std::string current;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    end = end == std::string::npos ? text.size() : end + 1;
    const std::string line = text.substr(start, end - start);
    if (line == "%\n" || line == "%") {
      if (!current.empty()) fortunes.push_back(std::move(current));
      current.clear();
    } else {
      current += line;
    }
    start = end;
  }
  if (!current.empty()) fortunes.push_back(std::move(current));
  return fortunes;
}

std::int64_t keep_printable_ascii(std::string& text) {
  const auto keep = [](char c) {
    const auto byte = static_cast<unsigned char>(c);
    return byte == '\n' || byte == '\t' || (byte >= 0x20 && byte <= 0x7E);
  };
  const std::size_t before = text.size();
  text.erase(std::remove_if(text.begin(), text.end(), [&](char c) { return !keep(c); }),
             text.end());
  return static_cast<std::int64_t>(before - text.size());
}

std::uint64_t fnv1a(const std::string& text) {
  std::uint64_t hash = 14695981039346656037ull;
  for (char c : text) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 1099511628211ull;
  }
  return hash;
}

FortunesSplit split_fortunes_corpus(const std::string& folder, std::uint64_t held_out_every) {
  ag::check(held_out_every >= 2, "fortunes", "held_out_every must be at least 2, got ",
            held_out_every);
  FortunesSplit split;
  std::unordered_set<std::string> seen;
  for (const std::string& file : fortune_files(folder)) {
    std::string text = ag::read_file(file, kMaxFortuneFileBytes, "fortune file");
    split.dropped_bytes += keep_printable_ascii(text);
    ++split.files;
    // [split]
    for (std::string& fortune : split_fortunes(text)) {
      if (!seen.insert(fortune).second) {
        ++split.duplicates;
        continue;
      }
      const bool held_out = fnv1a(fortune) % held_out_every == 0;
      (held_out ? split.held_out : split.train) += fortune + "%\n";
      ++(held_out ? split.held_out_fortunes : split.train_fortunes);
    }
    // [split]
  }
  ag::check(split.train_fortunes > 0 && split.held_out_fortunes > 0, "fortunes", "corpus folder '",
            folder, "' gave ", split.train_fortunes, " training and ", split.held_out_fortunes,
            " held-out fortunes; both must be non-empty");
  return split;
}

}  // namespace pe
