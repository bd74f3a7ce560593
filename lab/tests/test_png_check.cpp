// png_check: a whole PNG passes; every truncation, a damaged chunk and trailing bytes are
// named. And run_gnuplot renames a figure into place only when it passes: a gnuplot that
// leaves half a PNG (as on a full disk) gets an error, and the figure already under the final
// name stays as it was.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "ag/error.hpp"
#include "base/png_check.hpp"
#include "lab/figures.hpp"

using namespace pe;
namespace fs = std::filesystem;

namespace {

// A 1 x 1 grey PNG: signature, IHDR, IDAT, IEND, every CRC right (67 bytes).
const std::vector<unsigned char> kTinyPng = {
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48,
    0x44, 0x52, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x00, 0x00, 0x00,
    0x00, 0x3a, 0x7e, 0x9b, 0x55, 0x00, 0x00, 0x00, 0x0a, 0x49, 0x44, 0x41, 0x54, 0x78,
    0x9c, 0x63, 0x68, 0x00, 0x00, 0x00, 0x82, 0x00, 0x81, 0x77, 0xcd, 0x72, 0xb6, 0x00,
    0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82};

std::string write(const std::string& name, const std::vector<unsigned char>& bytes) {
  const std::string path = ::testing::TempDir() + "png_check_" + name;
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  return path;
}

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

}  // namespace

TEST(PngCheck, WholePngPasses) { EXPECT_EQ(png_problem(write("whole.png", kTinyPng)), ""); }

TEST(PngCheck, EveryTruncationIsRefused) {
  for (std::size_t size = 0; size < kTinyPng.size(); ++size) {
    const std::vector<unsigned char> part(kTinyPng.begin(), kTinyPng.begin() + long(size));
    EXPECT_NE(png_problem(write("part.png", part)), "") << size << " bytes";
  }
  EXPECT_EQ(png_problem(write("part.png", {})), "it is empty");
  EXPECT_EQ(png_problem(write("part.png", {kTinyPng.begin(), kTinyPng.end() - 12})),
            "it ends inside a chunk (no IEND)");
}

TEST(PngCheck, DamageIsNamed) {
  std::vector<unsigned char> flipped = kTinyPng;
  flipped[44] ^= 0x01;  // a byte of IDAT's data
  EXPECT_EQ(png_problem(write("flipped.png", flipped)), "chunk 1 (IDAT) has a wrong CRC");
  std::vector<unsigned char> longer = kTinyPng;
  longer.push_back(0);
  EXPECT_EQ(png_problem(write("longer.png", longer)), "it has bytes after its IEND chunk");
  std::vector<unsigned char> header = kTinyPng;
  header[12] = 'X';  // the first chunk is no IHDR
  EXPECT_EQ(png_problem(write("header.png", header)), "its first chunk is not a valid IHDR header");
  EXPECT_EQ(png_problem(write("text.png", {'h', 'e', 'l', 'l', 'o', '!', '!', '!', '!'})),
            "it does not start with the PNG signature");
  EXPECT_EQ(png_problem(::testing::TempDir() + "png_check_missing.png"), "it cannot be opened");
}

// A stand-in for gnuplot that writes the first 40 bytes of a PNG to the output it is given
// (-e "set output '<path>'"), exits 0 and says nothing: what a full disk can leave.
TEST(PngCheck, IncompleteFigureIsNeverRenamedIntoPlace) {
  const fs::path folder = fs::path(::testing::TempDir()) / "png_check_half";
  fs::remove_all(folder);
  fs::create_directories(folder);
  const std::string source = write("source.png", kTinyPng);
  const std::string fake = (folder / "half-gnuplot").string();
  std::ofstream(fake) << "#!/bin/sh\n"
                      << "out=$(printf '%s' \"$2\" | sed \"s/^set output '\\(.*\\)'$/\\1/\")\n"
                      << "head -c 40 '" << source << "' > \"$out\"\n";
  fs::permissions(fake, fs::perms::owner_all);
  const std::string figure = (folder / "figure.png").string();
  const std::string earlier = "an earlier figure, someone else's";
  std::ofstream(figure) << earlier;
  try {
    run_gnuplot("set terminal pngcairo\nplot x\n", figure, "write_line_plot", fake);
    FAIL() << "half a PNG was accepted";
  } catch (const ag::Error& e) {
    EXPECT_NE(std::string(e.what()).find("the PNG it wrote is incomplete: it ends inside a chunk"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(read(figure), earlier);
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(folder)) names.push_back(entry.path().filename());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"figure.png", "half-gnuplot"}));
}
