// Chapter 8's corpus: the fortunes files, cleaned and split once into a training text and a
// held-out text that share no fortune, the same split on every run.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "ag/error.hpp"
#include "chapters/08-length/fortunes_corpus.hpp"

using namespace pe;
namespace fs = std::filesystem;

namespace {

// A scratch folder that removes itself.
struct ScratchFolder {
  fs::path path;
  explicit ScratchFolder(const std::string& name)
      : path(fs::temp_directory_path() / ("pe_ch08_" + name + "_" + std::to_string(::getpid()))) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~ScratchFolder() { fs::remove_all(path); }
  void write(const std::string& name, const std::string& text) const {
    std::ofstream(path / name, std::ios::binary) << text;
  }
};

std::set<std::string> fortunes_set(const std::string& text) {
  const auto list = split_fortunes(text);
  return {list.begin(), list.end()};
}

// Many small distinct fortunes, so that both sides of a one-in-ten split get some.
std::string many_fortunes(const std::string& prefix, int count) {
  std::string text;
  for (int i = 0; i < count; ++i) text += prefix + " number " + std::to_string(i) + "\n%\n";
  return text;
}

}  // namespace

TEST(FortunesCorpus, SplitsOnPercentLinesAndDropsEmptyPieces) {
  const auto fortunes = split_fortunes("%\nOne line.\n%\nTwo\nlines.\n%\n%\nLast, no percent");
  ASSERT_EQ(fortunes.size(), 3u);
  EXPECT_EQ(fortunes[0], "One line.\n");
  EXPECT_EQ(fortunes[1], "Two\nlines.\n");
  EXPECT_EQ(fortunes[2], "Last, no percent");
  // A "%" inside a line is text, not a separator.
  EXPECT_EQ(split_fortunes("50% off\n%\n").size(), 1u);
}

TEST(FortunesCorpus, KeepsPrintableAsciiNewlineAndTab) {
  std::string text = "caf\xC3\xA9\tA\bB\n~";
  EXPECT_EQ(keep_printable_ascii(text), 3);
  EXPECT_EQ(text, "caf\tAB\n~");
}

TEST(FortunesCorpus, ReadsOnlyThePlainFilesOfTheFolder) {
  ScratchFolder folder("files");
  folder.write("b", "b\n%\n");
  folder.write("a", "a\n%\n");
  folder.write("a.dat", "binary index");
  fs::create_directories(folder.path / "off");
  folder.write("off/c", "c\n%\n");
  fs::create_symlink(folder.path / "a", folder.path / "a.u8");
  const auto files = fortune_files(folder.path.string());
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(fs::path(files[0]).filename(), "a");
  EXPECT_EQ(fs::path(files[1]).filename(), "b");
}

TEST(FortunesCorpus, MissingOrEmptyFolderSaysWhichPackageToInstall) {
  try {
    fortune_files("/no/such/fortunes");
    FAIL() << "no error for a missing folder";
  } catch (const ag::Error& e) {
    EXPECT_NE(std::string(e.what()).find("'/no/such/fortunes' does not exist"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("package 'fortunes'"), std::string::npos) << e.what();
  }
  ScratchFolder empty("empty");
  empty.write("x.dat", "only an index");
  EXPECT_THROW(fortune_files(empty.path.string()), ag::Error);
}

TEST(FortunesCorpus, SplitIsDeterministicDisjointAndKeepsDuplicatesOnOneSide) {
  ScratchFolder folder("split");
  folder.write("first", many_fortunes("first file", 200));
  // The second file repeats 50 fortunes of the first: they are kept once.
  folder.write("second", many_fortunes("first file", 50) + many_fortunes("second file", 200));
  const FortunesSplit split = split_fortunes_corpus(folder.path.string());
  EXPECT_EQ(split.files, 2);
  EXPECT_EQ(split.duplicates, 50);
  EXPECT_EQ(split.train_fortunes + split.held_out_fortunes, 400);
  EXPECT_GT(split.held_out_fortunes, 10);  // about one in ten of 400
  EXPECT_LT(split.held_out_fortunes, 80);

  const auto train = fortunes_set(split.train), held_out = fortunes_set(split.held_out);
  EXPECT_EQ(std::int64_t(train.size()), split.train_fortunes);
  EXPECT_EQ(std::int64_t(held_out.size()), split.held_out_fortunes);
  for (const auto& fortune : held_out) EXPECT_EQ(train.count(fortune), 0u) << fortune;

  const FortunesSplit again = split_fortunes_corpus(folder.path.string());
  EXPECT_EQ(again.train, split.train);
  EXPECT_EQ(again.held_out, split.held_out);
}

TEST(FortunesCorpus, HashIsFnv1a) {
  // The published FNV-1a 64-bit values of "" and "a".
  EXPECT_EQ(fnv1a(""), 0xcbf29ce484222325ull);
  EXPECT_EQ(fnv1a("a"), 0xaf63dc4c8601ec8cull);
}

TEST(FortunesCorpus, TheInstalledCorpusSplitsTheSameWayTwice) {
  if (!fs::is_directory(kFortunesFolder)) GTEST_SKIP() << "the fortunes package is not installed";
  const FortunesSplit a = split_fortunes_corpus(kFortunesFolder);
  const FortunesSplit b = split_fortunes_corpus(kFortunesFolder);
  EXPECT_EQ(a.train, b.train);
  EXPECT_EQ(a.held_out, b.held_out);
  const auto train = fortunes_set(a.train);
  for (const auto& fortune : fortunes_set(a.held_out)) EXPECT_EQ(train.count(fortune), 0u);
}
