// The figures: heatmaps and line plots come out as real PNG files of the expected size with a
// drawing on them, and every bad input fails with a one-line ag::Error before gnuplot runs.
// Rendering tests skip when gnuplot is absent.
#include <gtest/gtest.h>
#include <stb_image.h>
#include <stdlib.h>  // setenv, unsetenv
#include <sys/stat.h>
#include <sys/sysmacros.h>  // makedev
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "ag/error.hpp"
#include "ag/tensor.hpp"
#include "lab/figures.hpp"

using namespace pe;
namespace fs = std::filesystem;

namespace {

#define SKIP_WITHOUT_GNUPLOT() \
  if (!gnuplot_available()) GTEST_SKIP() << "gnuplot is not installed (Debian: gnuplot-nox)"

// A causal attention pattern like a model's on ShiftK: each query q puts `peak` on key q - 4
// (when it exists) and spreads the rest evenly over keys 0..q. Rows sum to 1.
Heatmap shift_attention(std::int64_t t, double peak, const std::string& title) {
  Heatmap panel;
  panel.rows = panel.cols = t;
  panel.values.assign(static_cast<std::size_t>(t * t), 0.0);
  for (std::int64_t q = 0; q < t; ++q) {
    const double share = q >= 4 ? peak : 0.0;
    for (std::int64_t k = 0; k <= q; ++k)
      panel.values[static_cast<std::size_t>(q * t + k)] =
          (1.0 - share) / static_cast<double>(q + 1) + (k == q - 4 ? share : 0.0);
  }
  panel.title = title;
  panel.range = std::pair{0.0, 1.0};
  return panel;
}

std::string temp_png(const std::string& name) {
  const std::string path = ::testing::TempDir() + "figures_" + name + ".png";
  std::error_code ignored;
  fs::remove(path, ignored);
  return path;
}

// The file is a PNG of width x height pixels with a drawing on it: stb_image decodes it, more
// than the fraction `drawn` of its pixels differ from the background (the top-left pixel's
// colour), and it has more than two colours (not a blank page, not a single flat fill). The
// heatmaps here cover 29-54% of their page, the line plots 2-5% (thin lines on white).
void expect_png(const std::string& path, int width, int height, double drawn) {
  ASSERT_TRUE(fs::exists(path)) << path;
  int w = 0, h = 0, channels = 0;
  std::unique_ptr<unsigned char, void (*)(void*)> pixels(
      stbi_load(path.c_str(), &w, &h, &channels, 3), stbi_image_free);
  ASSERT_TRUE(pixels) << path << " is not a readable PNG: " << stbi_failure_reason();
  EXPECT_EQ(w, width) << path;
  EXPECT_EQ(h, height) << path;
  auto colour = [&](std::size_t i) {
    const unsigned char* p = pixels.get() + 3 * i;
    return std::uint32_t(p[0]) << 16 | std::uint32_t(p[1]) << 8 | p[2];
  };
  const std::size_t count = std::size_t(w) * std::size_t(h);
  std::size_t foreground = 0;
  std::set<std::uint32_t> colours;
  for (std::size_t i = 0; i < count; ++i) {
    foreground += colour(i) != colour(0);
    colours.insert(colour(i));
  }
  EXPECT_GT(double(foreground), drawn * double(count))
      << path << ": " << foreground << " of " << count << " pixels drawn";
  EXPECT_GT(colours.size(), 2u) << path;
}

// Runs `call`, expects an ag::Error of one line containing every part.
void expect_error(const std::function<void()>& call, std::initializer_list<std::string> parts) {
  try {
    call();
    ADD_FAILURE() << "no ag::Error was thrown";
  } catch (const ag::Error& error) {
    const std::string message = error.what();
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    for (const auto& part : parts)
      EXPECT_NE(message.find(part), std::string::npos) << "'" << part << "' not in: " << message;
  }
}

Series curve(const std::string& label, std::size_t n, double (*f)(double)) {
  Series s{label, {}, {}};
  for (std::size_t i = 0; i < n; ++i) {
    s.x.push_back(static_cast<double>(i * 50));
    s.y.push_back(f(static_cast<double>(i)));
  }
  return s;
}

}  // namespace

// --- rendering ------------------------------------------------------------------------

TEST(Figures, HeatmapWritesAPng) {
  SKIP_WITHOUT_GNUPLOT();
  const std::string path = temp_png("heatmap");
  write_heatmaps(path, {shift_attention(32, 0.8, "layer 0, head 0")}, "ShiftK attention");
  expect_png(path, 480, 440 + 40, 0.2);  // one panel and the title line
}

TEST(Figures, EightPanelGridWritesAPng) {
  SKIP_WITHOUT_GNUPLOT();
  std::vector<Heatmap> layers;
  for (int layer = 0; layer < 8; ++layer)
    layers.push_back(shift_attention(32, 0.1 * layer, "layer " + std::to_string(layer)));
  const std::string path = temp_png("grid");
  write_heatmaps(path, layers, "attention per layer");
  expect_png(path, 4 * 480, 2 * 440 + 40, 0.2);  // 2 rows of 4 panels, and the title line
  const std::string single = temp_png("grid_single");
  write_heatmaps(single, {layers[0]}, "");
  expect_png(single, 480, 440, 0.2);  // no title line
}

TEST(Figures, DivergingPaletteAndAutoscaleWriteAPng) {
  SKIP_WITHOUT_GNUPLOT();
  Heatmap encoding;  // sinusoidal values in [-1, 1], positions x dimensions
  encoding.rows = 32;
  encoding.cols = 16;
  for (int p = 0; p < 32; ++p)
    for (int i = 0; i < 16; ++i) {
      const double angle = p / std::pow(10000.0, (i / 2 * 2) / 16.0);
      encoding.values.push_back(i % 2 ? std::cos(angle) : std::sin(angle));
    }
  encoding.title = "sinusoidal";
  encoding.x_label = "dimension";
  encoding.y_label = "position";
  encoding.palette = Palette::diverging;
  Heatmap constant = encoding;  // an autoscaled range of one value must still draw
  constant.values.assign(constant.values.size(), 0.25);
  constant.palette = Palette::viridis;
  constant.title = "constant, with a NaN";
  constant.values[5] = NAN;
  const std::string path = temp_png("diverging");
  write_heatmaps(path, {encoding, constant}, "encodings");
  expect_png(path, 2 * 480, 440 + 40, 0.2);
}

TEST(Figures, LinePlotWritesAPng) {
  SKIP_WITHOUT_GNUPLOT();
  const std::vector<Series> series = {
      curve("sinusoidal", 30, [](double i) { return 2.5 * std::exp(-i / 8) + 0.05; }),
      curve("rope", 30, [](double i) { return 2.5 * std::exp(-i / 4) + 0.01; })};
  const std::string path = temp_png("lines");
  write_line_plot(path, series, "training loss", "step", "loss", /*log_y=*/true);
  expect_png(path, 800, 500, 0.01);
  const std::string fixed = temp_png("lines_fixed");
  write_line_plot(fixed, series, "accuracy", "step", "accuracy", false, std::pair{0.0, 3.0});
  expect_png(fixed, 800, 500, 0.01);
}

TEST(Figures, LinePlotWithManyPointsAndGapsWritesAPng) {
  SKIP_WITHOUT_GNUPLOT();
  Series s = curve("long run", 500, [](double i) { return std::sin(i / 40); });
  s.y[100] = NAN;  // a diverged evaluation leaves a gap
  const std::string path = temp_png("lines_long");
  write_line_plot(path, {s, Series{"", {0, 1000}, {0, 0}}}, "", "step", "value");
  expect_png(path, 800, 500, 0.01);
}

TEST(Figures, TitlesAreDrawnVerbatimNotRunAsCommands) {
  SKIP_WITHOUT_GNUPLOT();
  const std::string marker = ::testing::TempDir() + "figures_marker";
  fs::remove(marker);
  const std::string path = temp_png("quotes");
  write_line_plot(path,
                  {Series{"it's \"quoted\" `touch " + marker + "` @x $y a_b", {0, 1}, {1, 2}}},
                  "two\nlines", "x", "y");
  expect_png(path, 800, 500, 0.01);
  EXPECT_FALSE(fs::exists(marker));
}

TEST(Figures, TempFilesAreRemoved) {
  SKIP_WITHOUT_GNUPLOT();
  const fs::path folder = fs::path(::testing::TempDir()) / "figures_tmpdir";
  fs::remove_all(folder);
  fs::create_directories(folder);
  const std::string path = temp_png("tmpdir"), bad = temp_png("tmpdir_bad");
  const char* previous = std::getenv("TMPDIR");  // TempDir() reads it too: paths come first
  const std::string saved = previous ? previous : "";
  setenv("TMPDIR", folder.c_str(), 1);
  write_heatmaps(path, {shift_attention(8, 0.5, "small")}, "");
  EXPECT_THROW(run_gnuplot("this is not gnuplot\n", bad), ag::Error);
  if (previous)
    setenv("TMPDIR", saved.c_str(), 1);
  else
    unsetenv("TMPDIR");
  expect_png(path, 480, 440, 0.2);
  EXPECT_TRUE(fs::is_empty(folder));
}

// --- gnuplot failures -----------------------------------------------------------------

TEST(Figures, MissingGnuplotIsAnError) {
  const std::string path = temp_png("missing");
  expect_error([&] { run_gnuplot("set output\n", path, "write_heatmaps", ""); },
               {"write_heatmaps", path, "gnuplot", "gnuplot-nox"});
  expect_error([&] { run_gnuplot("set output\n", path, "write_heatmaps", "/nonexistent/gnuplot"); },
               {"write_heatmaps", path, "/nonexistent/gnuplot"});
}

TEST(Figures, GnuplotErrorNamesThePngAndTheLine) {
  SKIP_WITHOUT_GNUPLOT();
  const std::string path = temp_png("bad_script");
  const std::string script = "set terminal pngcairo\nplot x\nset nonsense\n";
  expect_error([&] { run_gnuplot(script, path, "write_line_plot"); },
               {"write_line_plot", path, "script line 3", "unrecognized option"});
  EXPECT_FALSE(fs::exists(path));  // no half-written figure is left behind
}

// --- bad input: each fails before gnuplot runs ------------------------------------------

TEST(Figures, UnwritablePathIsAnError) {
  const Heatmap panel = shift_attention(8, 0.5, "p");
  expect_error([&] { write_heatmaps("/nonexistent/dir/x.png", {panel}, "t"); },
               {"write_heatmaps", "/nonexistent/dir/x.png", "does not exist"});
  expect_error([&] { write_heatmaps(::testing::TempDir(), {panel}, "t"); },
               {"write_heatmaps", "is a folder"});
  expect_error(
      [&] {
        write_line_plot("/nonexistent/dir/x.png", {Series{"a", {0}, {1}}}, "", "", "");
      },
      {"write_line_plot", "/nonexistent/dir/x.png"});
  expect_error(
      [&] {
        write_line_plot("", {Series{"a", {0}, {1}}}, "", "", "");
      },
      {"write_line_plot", "empty"});
}

TEST(Figures, NoPanelsIsAnError) {
  expect_error([] { write_heatmaps(temp_png("none"), {}, "t"); }, {"write_heatmaps", "no panels"});
}

TEST(Figures, ValueCountMustMatchTheShape) {
  Heatmap panel = shift_attention(8, 0.5, "short one");
  panel.values.pop_back();
  expect_error([&] { write_heatmaps(temp_png("count"), {panel}, "t"); },
               {"write_heatmaps", "short one", "63 values", "8 x 8"});
}

TEST(Figures, RowsAndColsMustBePositive) {
  Heatmap panel;
  panel.title = "empty";
  expect_error([&] { write_heatmaps(temp_png("zero"), {panel}, "t"); },
               {"write_heatmaps", "empty", "0 x 0", "positive"});
  panel.rows = -2;
  panel.cols = -2;
  panel.values.assign(4, 0.0);
  expect_error([&] { write_heatmaps(temp_png("negative"), {panel}, "t"); },
               {"write_heatmaps", "-2 x -2"});
}

TEST(Figures, ColourRangeMustBeIncreasing) {
  Heatmap panel = shift_attention(8, 0.5, "backwards");
  panel.range = std::pair{1.0, 0.0};
  expect_error([&] { write_heatmaps(temp_png("range"), {panel}, "t"); },
               {"write_heatmaps", "backwards", "range"});
}

TEST(Figures, NegativeColumnsIsAnError) {
  expect_error([] { write_heatmaps(temp_png("columns"), {shift_attention(8, 0.5, "p")}, "t", -1); },
               {"write_heatmaps", "columns", "-1"});
}

TEST(Figures, NoSeriesIsAnError) {
  expect_error([] { write_line_plot(temp_png("noseries"), {}, "t", "x", "y"); },
               {"write_line_plot", "no series"});
}

TEST(Figures, SeriesSizesMustMatch) {
  expect_error(
      [] {
        write_line_plot(temp_png("sizes"), {Series{"ragged", {0, 1, 2}, {1, 2}}}, "", "", "");
      },
      {"write_line_plot", "ragged", "3 x values", "2 y values"});
  expect_error(
      [] {
        write_line_plot(temp_png("empty"), {Series{"hollow", {}, {}}}, "", "", "");
      },
      {"write_line_plot", "hollow", "no points"});
}

TEST(Figures, LogScaleNeedsPositiveValues) {
  expect_error(
      [] {
        write_line_plot(temp_png("log"), {Series{"zero loss", {0, 1}, {1, 0}}}, "", "", "", true);
      },
      {"write_line_plot", "zero loss", "y[1] = 0", "log scale"});
  expect_error(
      [] {
        write_line_plot(temp_png("yrange"), {Series{"a", {0, 1}, {1, 2}}}, "", "", "", false,
                        std::pair{2.0, 2.0});
      },
      {"write_line_plot", "y axis", "range"});
}

// --- from tensors -----------------------------------------------------------------------

TEST(Figures, HeatmapFromAMatrix) {
  const auto t = ag::from_vector({1, 2, 3, 4, 5, 6}, {1, 2, 3}, ag::Dtype::f64);
  const Heatmap panel = heatmap_from(t, "m");
  EXPECT_EQ(panel.rows, 2);
  EXPECT_EQ(panel.cols, 3);
  EXPECT_EQ(panel.values, (std::vector<double>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(panel.title, "m");
  expect_error([] { heatmap_from(ag::zeros({2, 3, 4})); }, {"heatmap_from", "[2, 3, 4]"});
}

TEST(Figures, HeatmapSlicePicksOneMatrix) {
  std::vector<double> values(2 * 3 * 2 * 2);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<double>(i);
  const auto t = ag::from_vector(values, {2, 3, 2, 2}, ag::Dtype::f64);  // [B, H, T, T]
  const Heatmap panel = heatmap_slice(t, {1, 2}, "b1 h2");
  EXPECT_EQ(panel.rows, 2);
  EXPECT_EQ(panel.cols, 2);
  EXPECT_EQ(panel.values, (std::vector<double>{20, 21, 22, 23}));
  expect_error([&] { heatmap_slice(t, {1}); }, {"heatmap_slice", "2 leading indices, got 1"});
  expect_error([&] { heatmap_slice(t, {1, 3}); }, {"heatmap_slice", "index 3", "axis 1"});
}

// --- destinations in a shared folder and signals ----------------------------------------

namespace {

fs::path fresh_folder(const std::string& name) {
  const fs::path folder = fs::path(::testing::TempDir()) / ("figures_" + name);
  fs::remove_all(folder);
  fs::create_directories(folder);
  return folder;
}

std::string text_of(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A stand-in for gnuplot that writes 100 KB into the output its `-e 'set output ...'` names,
// writes its process id to `pid_file` (once that output exists) and then sleeps for a minute
// as the same process: a figure caught mid-drawing.
fs::path slow_gnuplot(const fs::path& folder, const fs::path& pid_file) {
  const fs::path program = folder / "gnuplot";
  std::ofstream(program) << "#!/bin/sh\n"
                         << "out=${2#set output \\'}\nout=${out%\\'}\n"
                         << "head -c 100000 /dev/zero > \"$out\"\n"
                         << "echo $$ > '" << pid_file.string() << ".part'\n"
                         << "mv '" << pid_file.string() << ".part' '" << pid_file.string() << "'\n"
                         << "exec sleep 60\n";
  fs::permissions(program, fs::perms::owner_all);
  return program;
}

// The process id in `pid_file` once it appears (within 20 s), or -1.
pid_t wait_for_pid_file(const fs::path& pid_file) {
  for (int i = 0; i < 2000; ++i) {
    std::error_code error;
    if (fs::exists(pid_file, error)) return static_cast<pid_t>(std::stol(text_of(pid_file)));
    ::usleep(10000);
  }
  return -1;
}

}  // namespace

TEST(Figures, APipeADeviceALinkOrAFolderIsRefusedBeforeDrawingAndKept) {
  const fs::path folder = fresh_folder("destinations");
  const Heatmap panel = shift_attention(8, 0.5, "p");
  const fs::path fifo = folder / "fifo.png";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // no gnuplot needed: the refusal comes first, and a program that cannot run proves it
  expect_error([&] { write_heatmaps(fifo.string(), {panel}, "t"); },
               {"write_heatmaps", fifo.string(), "pipe"});
  expect_error([&] { run_gnuplot("set output\n", fifo.string(), "eval", "/nonexistent/gnuplot"); },
               {"eval", fifo.string(), "pipe"});
  EXPECT_TRUE(fs::is_fifo(fs::symlink_status(fifo)));

  std::ofstream(folder / "victim") << "precious";
  fs::create_symlink(folder / "victim", folder / "link.png");
  expect_error(
      [&] {
        write_line_plot((folder / "link.png").string(), {Series{"a", {0}, {1}}}, "", "", "");
      },
      {"write_line_plot", "symbolic link"});
  EXPECT_TRUE(fs::is_symlink(folder / "link.png"));
  EXPECT_EQ(text_of(folder / "victim"), "precious");

  // Root makes its own null device here (a regression must not replace the system's);
  // anyone else cannot replace /dev/null, and the message shows the check refused it.
  fs::path device = "/dev/null";
  if (::geteuid() == 0) {
    device = folder / "mynull";
    ASSERT_EQ(::mknod(device.c_str(), S_IFCHR | 0666, makedev(1, 3)), 0) << std::strerror(errno);
  }
  expect_error([&] { write_heatmaps(device.string(), {panel}, "t"); },
               {"write_heatmaps", device.string(), "character device"});
  EXPECT_TRUE(fs::is_character_file(fs::symlink_status(device)));
}

TEST(Figures, ALinkPlantedUnderTheTemporaryNameIsNotFollowed) {
  SKIP_WITHOUT_GNUPLOT();
  const fs::path folder = fresh_folder("planted");
  const fs::path png = folder / "curve.png";
  std::ofstream(folder / "victim") << "precious";
  const fs::path planted = png.string() + ".tmp." + std::to_string(::getpid());
  fs::create_symlink(folder / "victim", planted);
  write_line_plot(png.string(), {Series{"a", {0, 1}, {1, 2}}}, "t", "x", "y");
  expect_png(png.string(), 800, 500, 0.01);
  EXPECT_EQ(text_of(folder / "victim"), "precious");
  EXPECT_TRUE(fs::is_symlink(planted));
}

TEST(Figures, ASignalWhileGnuplotDrawsStopsItAndLeavesNothingBehind) {
  const fs::path folder = fresh_folder("signal");
  const fs::path temporaries = folder / "tmp", out = folder / "out";
  fs::create_directories(temporaries);
  fs::create_directories(out);
  const fs::path pid_file = folder / "gnuplot.pid";
  const fs::path program = slow_gnuplot(folder, pid_file);
  const fs::path png = out / "figure.png";
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {  // a program drawing a figure, with its own temporary folder
    ::setenv("TMPDIR", temporaries.c_str(), 1);
    try {
      run_gnuplot("set terminal pngcairo\n", png.string(), "test", program.string());
    } catch (...) {
    }
    ::_exit(3);  // reached only if the signal did not end it
  }
  const pid_t gnuplot = wait_for_pid_file(pid_file);
  ASSERT_GT(gnuplot, 0) << "the stand-in gnuplot never started";
  EXPECT_FALSE(fs::is_empty(temporaries)) << "it draws in the private folder";
  ASSERT_EQ(::kill(child, SIGTERM), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM)
      << "the program must end as killed by SIGTERM; status " << status;
  errno = 0;
  EXPECT_EQ(::kill(gnuplot, 0), -1) << "gnuplot (pid " << gnuplot << ") is still running";
  EXPECT_EQ(errno, ESRCH);
  if (errno != ESRCH) ::kill(gnuplot, SIGKILL);
  EXPECT_TRUE(fs::is_empty(temporaries)) << "the private temporary folder is left";
  EXPECT_TRUE(fs::is_empty(out)) << "a figure or a temporary is left beside it";
}
