#include "lab/figures.hpp"

#include <fcntl.h>
#include <stdlib.h>    // mkdtemp
#include <sys/wait.h>  // WIFEXITED, WEXITSTATUS
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "ag/error.hpp"
#include "base/png_check.hpp"

namespace pe {

namespace {

namespace fs = std::filesystem;

// Viridis, matplotlib's default colour map, by its nine published control points
// (viridisLite's viridis(9); matplotlib's values agree to within one unit in the last digit).
constexpr const char* kViridis =
    "set palette defined (0 '#440154', 0.125 '#472d7b', 0.25 '#3b528b', 0.375 '#2c728e', "
    "0.5 '#21908c', 0.625 '#27ad81', 0.75 '#5dc863', 0.875 '#aadc32', 1 '#fde725')\n";
// ColorBrewer's RdBu (7 classes), blue for negative, white at zero, red for positive.
constexpr const char* kDiverging =
    "set palette defined (-1 '#2166ac', -0.667 '#67a9cf', -0.333 '#d1e5f0', 0 '#f7f7f7', "
    "0.333 '#fddbc7', 0.667 '#ef8a62', 1 '#b2182b')\n";
// Okabe and Ito's colour-blind-safe colours, for the curves of a line plot.
// Ten colours, so that a plot of every encoding of the book (chapter 8: nine rows and the
// training length) gives each line its own: Okabe-Ito's eight, then purple and brown.
constexpr const char* kLineColours[] = {"#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00",
                                        "#56b4e9", "#000000", "#999999", "#7b3294", "#8c510a"};

// A gnuplot string literal. Single quotes: gnuplot substitutes nothing inside them (in
// double quotes it would run `backquoted` text as a command). A newline becomes "\n" joined
// to the single-quoted parts with gnuplot's string concatenation.
std::string quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'')
      out += "''";
    else if (c == '\n')
      out += "'.\"\\n\".'";
    else if (c != '\r')
      out += c;
  }
  return out + "'";
}

// A path quoted for the shell (sh -c), for std::system.
std::string shell_quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

// A number as gnuplot reads it; NaN and infinities become NaN (a blank cell or a gap).
std::string number(double value) {
  if (!std::isfinite(value)) return "NaN";
  std::ostringstream out;
  out.precision(10);
  out << value;
  return out.str();
}

// The font of every figure: DejaVu Sans if fontconfig knows it, else gnuplot's default face.
std::string font(int size) {
  static const bool dejavu = std::system("fc-list -q 'DejaVu Sans' > /dev/null 2>&1") == 0;
  return std::string(dejavu ? "DejaVu Sans," : ",") + std::to_string(size);
}

// A power-of-two tick step that gives at most eight ticks (every 4 positions for 32).
std::int64_t tick_step(std::int64_t extent) {
  std::int64_t step = 1;
  while (extent > 8 * step) step *= 2;
  return step;
}

// A temporary folder, removed with everything in it when this goes out of scope.
class TempFolder {
 public:
  explicit TempFolder(const char* op) {
    std::string pattern = (fs::temp_directory_path() / "pe-figures-XXXXXX").string();
    ag::check(mkdtemp(pattern.data()) != nullptr, op, "cannot make a temporary folder '", pattern,
              "': ", std::strerror(errno));
    path_ = pattern;
  }
  ~TempFolder() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  TempFolder(const TempFolder&) = delete;
  TempFolder& operator=(const TempFolder&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// Fails unless png_path names a file in an existing folder. Whether the folder can be written
// is found when the temporary figure is made beside it (run_gnuplot).
void check_writable(const std::string& png_path, const char* op) {
  ag::check(!png_path.empty(), op, "the PNG path is empty");
  const fs::path path(png_path);
  std::error_code error;
  const fs::path folder = path.has_parent_path() ? path.parent_path() : fs::path(".");
  ag::check(fs::is_directory(folder, error), op, "cannot write '", png_path, "': folder '",
            folder.string(), "' does not exist");
  ag::check(!fs::is_directory(path, error), op, "cannot write '", png_path, "': it is a folder");
}

// Bytes free on the disk that holds `folder` (for a message), or -1 when unknown.
long long free_bytes(const fs::path& folder) {
  std::error_code error;
  const fs::space_info space = fs::space(folder, error);
  return error ? -1 : static_cast<long long>(space.available);
}

// gnuplot's most telling line: the one naming the script line ("line 7: undefined
// variable: x"), else the first line that is not blank.
std::string first_error(const fs::path& errors_path) {
  std::ifstream errors(errors_path);
  static const std::regex located("^\".*\" line ([0-9]+): (.*)$");
  std::string line, first;
  while (std::getline(errors, line)) {
    std::smatch match;
    if (std::regex_match(line, match, located))
      return "script line " + match[1].str() + ": " + match[2].str();
    if (first.empty() && line.find_first_not_of(" \t^") != std::string::npos) first = line;
  }
  return first;
}

void check_range(const std::optional<std::pair<double, double>>& range, const char* op,
                 const std::string& what) {
  if (!range) return;
  ag::check(
      std::isfinite(range->first) && std::isfinite(range->second) && range->first < range->second,
      op, what, " has range [", range->first, ", ", range->second,
      "]: it needs two finite ends, the first below the second");
}

void check_panel(const Heatmap& panel, std::size_t index) {
  const std::string what = "panel " + std::to_string(index) + " ('" + panel.title + "')";
  ag::check(panel.rows > 0 && panel.cols > 0, "write_heatmaps", what, " is ", panel.rows, " x ",
            panel.cols, ": rows and cols must be positive");
  ag::check(static_cast<std::int64_t>(panel.values.size()) == panel.rows * panel.cols,
            "write_heatmaps", what, " has ", panel.values.size(), " values for ", panel.rows, " x ",
            panel.cols, " = ", panel.rows * panel.cols, " cells");
  check_range(panel.range, "write_heatmaps", what);
}

// The colour range of a panel: its own, or one that fits its finite values.
std::pair<double, double> colour_range(const Heatmap& panel) {
  if (panel.range) return *panel.range;
  double low = INFINITY, high = -INFINITY;
  for (double v : panel.values)
    if (std::isfinite(v)) low = std::min(low, v), high = std::max(high, v);
  if (low > high) return {0, 1};  // nothing finite to fit
  if (panel.palette == Palette::diverging) {
    const double largest = std::max(std::abs(low), std::abs(high));
    return largest > 0 ? std::pair{-largest, largest} : std::pair{-1.0, 1.0};
  }
  if (low == high) return {low - 0.5, high + 0.5};
  return {low, high};
}

// Columns of the grid when the caller leaves the choice: one row of up to 4, then rows of
// up to 4 (8 panels: 2 x 4), and a square-ish grid beyond 16.
int grid_columns(int count) {
  if (count <= 4) return count;
  if (count <= 16) {
    const int rows = (count + 3) / 4;
    return (count + rows - 1) / rows;
  }
  return static_cast<int>(std::ceil(std::sqrt(static_cast<double>(count))));
}

}  // namespace

const std::string& gnuplot_path() {
  static const std::string path = [] {
    std::string found;
    if (FILE* pipe = popen("command -v gnuplot 2> /dev/null", "r")) {
      char buffer[4096];
      if (std::fgets(buffer, sizeof buffer, pipe)) found = buffer;
      pclose(pipe);
    }
    while (!found.empty() && (found.back() == '\n' || found.back() == '\r')) found.pop_back();
    return found;
  }();
  return path;
}

bool gnuplot_available() { return !gnuplot_path().empty(); }

// [atomic-figure]
void run_gnuplot(const std::string& script, const std::string& png_path, const char* op,
                 const std::string& program) {
  check_writable(png_path, op);
  ag::check(!program.empty(), op, "cannot draw '", png_path,
            "': gnuplot was not found on PATH (install the Debian package gnuplot-nox)");
  const TempFolder folder(op);
  const fs::path script_path = folder.path() / "figure.gp";
  const fs::path errors_path = folder.path() / "errors.txt";
  {
    std::ofstream out(script_path, std::ios::binary);
    out << script;
    ag::check(out.good(), op, "cannot write the gnuplot script for '", png_path, "' to '",
              script_path.string(), "'");
  }
  // gnuplot draws into a temporary name beside the figure (a kill leaves "<name>.tmp.<pid>",
  // which run.cpp's remove_stale_temporaries clears), the result is checked, and only a
  // complete PNG is renamed into place: the file under the final name is always whole, and a
  // failure removes only this process's temporary file, never someone else's figure.
  const std::string temporary = png_path + ".tmp." + std::to_string(::getpid());
  {
    const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    ag::check(fd >= 0, op, "cannot write '", png_path, "': ", std::strerror(errno));
    ::close(fd);
  }
  const std::string command =
      shell_quoted(program) + " -e " + shell_quoted("set output " + quoted(temporary)) + " " +
      shell_quoted(script_path.string()) + " > /dev/null 2> " + shell_quoted(errors_path.string());
  const int status = std::system(command.c_str());
  const bool ran = status != -1 && WIFEXITED(status);
  const int code = ran ? WEXITSTATUS(status) : -1;
  std::string reason;
  if (code == 0) {
    const std::string problem = png_problem(temporary);
    if (problem.empty()) {
      const int fd = ::open(temporary.c_str(), O_RDONLY | O_CLOEXEC);
      const bool synced = fd >= 0 && ::fsync(fd) == 0;  // on disk before the name points at it
      if (fd >= 0) ::close(fd);
      if (synced && ::rename(temporary.c_str(), png_path.c_str()) == 0) return;
      reason = std::string("cannot put it in place: ") + std::strerror(errno);
    } else {
      reason = "the PNG it wrote is incomplete: " + problem;
      if (const std::string said = first_error(errors_path);
          !said.empty() && said.rfind("Warning", 0) != 0)
        reason += " (gnuplot: " + said + ")";
      const fs::path path(png_path);
      const long long free = free_bytes(path.has_parent_path() ? path.parent_path() : ".");
      if (free >= 0 && free < (1 << 20))
        reason += "; the disk is full (" + std::to_string(free / 1024) + " KB free)";
    }
  } else {
    reason = code == 127 ? "could not run '" + program + "'" : first_error(errors_path);
    if (reason.empty()) reason = "exit status " + std::to_string(code);
    reason += " (is gnuplot-nox installed and working?)";
  }
  ::unlink(temporary.c_str());
  throw ag::Error(std::string(op) + ": gnuplot could not draw '" + png_path + "': " + reason);
}
// [atomic-figure]

Heatmap heatmap_from(const ag::Tensor& matrix, std::string title) {
  ag::check(matrix.defined(), "heatmap_from", "the tensor is undefined");
  ag::Shape shape;
  for (auto extent : matrix.shape())
    if (extent != 1 || !shape.empty()) shape.push_back(extent);
  while (shape.size() < 2) shape.insert(shape.begin(), 1);
  ag::check(shape.size() == 2, "heatmap_from", "needs a matrix [rows, cols], got shape ",
            ag::shape_string(matrix.shape()), " (use heatmap_slice to pick one matrix)");
  Heatmap panel;
  panel.rows = shape[0];
  panel.cols = shape[1];
  panel.values = matrix.to_vector();
  panel.title = std::move(title);
  return panel;
}

Heatmap heatmap_slice(const ag::Tensor& tensor, const std::vector<std::int64_t>& index,
                      std::string title) {
  ag::check(tensor.defined(), "heatmap_slice", "the tensor is undefined");
  const ag::Shape& shape = tensor.shape();
  ag::check(shape.size() >= 2 && index.size() == shape.size() - 2, "heatmap_slice",
            "tensor of shape ", ag::shape_string(shape), " needs ",
            shape.size() >= 2 ? shape.size() - 2 : 0, " leading indices, got ", index.size());
  std::int64_t offset = 0;
  for (std::size_t axis = 0; axis < index.size(); ++axis) {
    ag::check(index[axis] >= 0 && index[axis] < shape[axis], "heatmap_slice", "index ", index[axis],
              " is out of range for axis ", axis, " of shape ", ag::shape_string(shape));
    offset = offset * shape[axis] + index[axis];
  }
  Heatmap panel;
  panel.rows = shape[shape.size() - 2];
  panel.cols = shape[shape.size() - 1];
  const std::vector<double> all = tensor.to_vector();
  const auto begin = all.begin() + offset * panel.rows * panel.cols;
  panel.values.assign(begin, begin + panel.rows * panel.cols);
  panel.title = std::move(title);
  return panel;
}

void write_heatmaps(const std::string& png_path, const std::vector<Heatmap>& panels,
                    const std::string& suptitle, int columns) {
  const char* op = "write_heatmaps";
  ag::check(!panels.empty(), op, "no panels to draw into '", png_path, "'");
  ag::check(columns >= 0, op, "columns must be 0 (choose) or positive, got ", columns);
  for (std::size_t i = 0; i < panels.size(); ++i) check_panel(panels[i], i);

  const int count = static_cast<int>(panels.size());
  if (columns == 0) columns = grid_columns(count);
  columns = std::min(columns, count);
  const int rows = (count + columns - 1) / columns;
  const int title_height = suptitle.empty() ? 0 : 40;

  std::ostringstream gp;
  gp << "set terminal pngcairo noenhanced size " << 480 * columns << ","
     << 440 * rows + title_height << " font '" << font(11) << "'\n";
  for (std::size_t i = 0; i < panels.size(); ++i) {
    const Heatmap& panel = panels[i];
    gp << "$panel" << i << " << EOD\n";
    for (std::int64_t r = 0; r < panel.rows; ++r) {
      for (std::int64_t c = 0; c < panel.cols; ++c)
        gp << (c ? " " : "") << number(panel.values[r * panel.cols + c]);
      gp << "\n";
    }
    gp << "EOD\n";
  }
  gp << "set multiplot layout " << rows << "," << columns;
  if (!suptitle.empty()) gp << " title " << quoted(suptitle) << " font '" << font(15) << "'";
  gp << "\nset size ratio -1\nset tics out nomirror scale 0.7\nset key off\n";
  for (std::size_t i = 0; i < panels.size(); ++i) {
    const Heatmap& panel = panels[i];
    const auto [low, high] = colour_range(panel);
    gp << (panel.palette == Palette::viridis ? kViridis : kDiverging) << "set title "
       << quoted(panel.title) << "\n"
       << "set xlabel " << quoted(panel.x_label) << "\n"
       << "set ylabel " << quoted(panel.y_label) << "\n"
       << "set xrange [-0.5:" << panel.cols - 0.5 << "]\n"
       << "set yrange [" << panel.rows - 0.5 << ":-0.5]\n"  // row 0 at the top
       << "set xtics 0," << tick_step(panel.cols) << "," << panel.cols - 1 << "\n"
       << "set ytics 0," << tick_step(panel.rows) << "," << panel.rows - 1 << "\n"
       << "set cbrange [" << number(low) << ":" << number(high) << "]\n"
       << "plot $panel" << i << " matrix with image notitle\n";
  }
  gp << "unset multiplot\nset output\n";
  run_gnuplot(gp.str(), png_path, op);
}

void write_line_plot(const std::string& png_path, const std::vector<Series>& series,
                     const std::string& title, const std::string& x_label,
                     const std::string& y_label, bool log_y,
                     std::optional<std::pair<double, double>> y_range) {
  const char* op = "write_line_plot";
  ag::check(!series.empty(), op, "no series to draw into '", png_path, "'");
  for (std::size_t i = 0; i < series.size(); ++i) {
    const Series& s = series[i];
    const std::string what = "series " + std::to_string(i) + " ('" + s.label + "')";
    ag::check(s.x.size() == s.y.size(), op, what, " has ", s.x.size(), " x values and ", s.y.size(),
              " y values");
    ag::check(!s.x.empty(), op, what, " has no points");
    for (std::size_t k = 0; k < s.x.size(); ++k) {
      ag::check(std::isfinite(s.x[k]), op, what, " has x[", k, "] = ", s.x[k]);
      if (log_y && std::isfinite(s.y[k]))
        ag::check(s.y[k] > 0, op, what, " has y[", k, "] = ", s.y[k],
                  ", which a log scale cannot show");
    }
  }
  check_range(y_range, op, "the y axis");
  if (y_range && log_y)
    ag::check(y_range->first > 0, op, "the y axis has range [", y_range->first, ", ",
              y_range->second, "], which a log scale cannot show");

  std::ostringstream gp;
  gp << "set terminal pngcairo noenhanced size 800,500 font '" << font(11) << "'\n"
     << "set title " << quoted(title) << " font '" << font(14) << "'\n"
     << "set xlabel " << quoted(x_label) << "\nset ylabel " << quoted(y_label) << "\n"
     << "set style line 100 lc rgb '#d0d0d0' lw 1 dt solid\nset grid ls 100\nset tics out "
        "nomirror\nset border 3\n"
     << "set key outside right top vertical Left reverse samplen 2.5 spacing 1.3\n"
     << "set autoscale xfix\nset offsets graph 0.02, graph 0.02, 0, 0\n";
  for (std::size_t i = 0; i < std::size(kLineColours); ++i)
    gp << "set linetype " << i + 1 << " lc rgb '" << kLineColours[i] << "' lw 2 pt 7 ps 0.8\n";
  gp << "set linetype cycle " << std::size(kLineColours) << "\n";
  if (log_y) gp << "set logscale y\n";
  if (y_range)
    gp << "set yrange [" << number(y_range->first) << ":" << number(y_range->second) << "]\n";
  for (std::size_t i = 0; i < series.size(); ++i) {
    gp << "$series" << i << " << EOD\n";
    for (std::size_t k = 0; k < series[i].x.size(); ++k)
      gp << number(series[i].x[k]) << " " << number(series[i].y[k]) << "\n";
    gp << "EOD\n";
  }
  gp << "plot ";
  for (std::size_t i = 0; i < series.size(); ++i) {
    gp << (i ? ", \\\n     " : "") << "$series" << i << " using 1:2 with "
       << (series[i].x.size() <= 40 ? "linespoints" : "lines") << " linetype " << i + 1;
    if (series[i].label.empty())
      gp << " notitle";
    else
      gp << " title " << quoted(series[i].label);
  }
  gp << "\nset output\n";
  run_gnuplot(gp.str(), png_path, op);
}

}  // namespace pe
