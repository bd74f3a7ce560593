// The English text of chapter 8's language model: the quotations of the Debian package
// `fortunes`, read from its plain text files, cleaned to printable ASCII, and split once and
// for all into a training text and a held-out text that share no fortune.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace pe {

/// Where Debian's `fortunes` package puts its text files.
inline constexpr const char* kFortunesFolder = "/usr/share/games/fortunes";

/// The plain text files of a fortunes folder, sorted by name: regular files only (not the
/// symbolic links some packages add), none of the `.dat` indexes that strfile writes, and
/// nothing from subfolders (the offensive collection lives in one, in another package).
/// A folder that is missing or holds no such file is an ag::Error that says which package
/// to install.
std::vector<std::string> fortune_files(const std::string& folder);

/// The fortunes of one file: the pieces between lines that hold a single "%", each with its
/// trailing newline, empty pieces dropped.
std::vector<std::string> split_fortunes(const std::string& text);

/// Keeps newline, tab and printable ASCII (0x20..0x7E); drops every other byte (UTF-8
/// accents, the backspaces of old overstrike formatting). Returns the number dropped.
std::int64_t keep_printable_ascii(std::string& text);

/// A stable 64-bit hash of a text (FNV-1a): the same on every machine and build.
std::uint64_t fnv1a(const std::string& text);

/// The fortunes corpus split into training and held-out text, with counts for the chapter.
struct FortunesSplit {
  std::string train;                ///< training fortunes joined with "%\n" lines, as in the files
  std::string held_out;             ///< held-out fortunes, joined the same way
  std::int64_t files = 0;           ///< plain files read
  std::int64_t train_fortunes = 0;  ///< distinct fortunes in the training text
  std::int64_t held_out_fortunes = 0;  ///< distinct fortunes held out
  std::int64_t duplicates = 0;         ///< fortunes that appeared before (kept once)
  std::int64_t dropped_bytes = 0;      ///< bytes outside printable ASCII
};

/// Reads every plain file of the folder, cleans it, keeps each distinct fortune once, and
/// puts a fortune in the held-out text when fnv1a(fortune) % held_out_every == 0 (about one
/// in held_out_every). The split depends on the text of a fortune alone, not on the order of
/// files or the machine, so it is the same on every run, and a fortune that two files share
/// cannot land on both sides.
FortunesSplit split_fortunes_corpus(const std::string& folder, std::uint64_t held_out_every = 10);

}  // namespace pe
