#include "lab/figures.hpp"

#include <fcntl.h>
#include <spawn.h>     // posix_spawnp
#include <stdlib.h>    // mkdtemp
#include <sys/wait.h>  // waitpid, WIFEXITED, WEXITSTATUS
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "ag/error.hpp"
#include "ag/files.hpp"
#include "base/png_check.hpp"

extern char** environ;  // gnuplot runs in this program's environment

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
  ~TempFolder() { remove(); }
  /// Removes the folder now (before a signal ends the program, when no destructor runs).
  void remove() {
    std::error_code ignored;
    if (!path_.empty()) fs::remove_all(path_, ignored);
    path_.clear();
  }
  TempFolder(const TempFolder&) = delete;
  TempFolder& operator=(const TempFolder&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

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

// The signals that end a program from outside (kill, Ctrl-C, a closed terminal). While gnuplot
// runs they are caught, so that gnuplot and the files it is writing go first (SignalGuard).
constexpr int kEndingSignals[] = {SIGTERM, SIGINT, SIGHUP};

// The signal caught while a figure was drawn, or 0. The handler only sets it (all a handler
// may safely do); run_gnuplot looks at it between short waits for gnuplot.
volatile std::sig_atomic_t caught_signal = 0;
extern "C" void note_signal(int signal) { caught_signal = signal; }

// Catches the ending signals for as long as it lives and gives back the handlers it found.
// A signal the program ignores (nohup's SIGHUP) stays ignored.
class SignalGuard {
 public:
  SignalGuard() {
    caught_signal = 0;
    struct sigaction catcher {};
    catcher.sa_handler = note_signal;
    sigemptyset(&catcher.sa_mask);
    for (std::size_t i = 0; i < std::size(kEndingSignals); ++i) {
      ::sigaction(kEndingSignals[i], nullptr, &old_[i]);
      const bool ignored = !(old_[i].sa_flags & SA_SIGINFO) && old_[i].sa_handler == SIG_IGN;
      installed_[i] = !ignored && ::sigaction(kEndingSignals[i], &catcher, nullptr) == 0;
    }
  }
  // A signal caught on the way out (an error thrown meanwhile) is still passed on: it is
  // never lost. The temporary folder, made after the guard, is gone by then.
  ~SignalGuard() { pass_on(); }
  SignalGuard(const SignalGuard&) = delete;
  SignalGuard& operator=(const SignalGuard&) = delete;

  int caught() const { return caught_signal; }

  // Puts the old handlers back, then delivers the caught signal to them: by default the
  // program ends, killed by that signal, as a shell expects. Returns only when an old handler
  // chose to go on.
  void pass_on() {
    const int signal = caught_signal;
    restore();
    caught_signal = 0;
    if (signal != 0) ::raise(signal);
  }

 private:
  void restore() {
    for (std::size_t i = 0; i < std::size(kEndingSignals); ++i)
      if (installed_[i]) ::sigaction(kEndingSignals[i], &old_[i], nullptr);
    std::fill(std::begin(installed_), std::end(installed_), false);
  }
  struct sigaction old_[std::size(kEndingSignals)]{};
  bool installed_[std::size(kEndingSignals)] = {};
};

// Starts gnuplot on the script, its output set to png (argv, no shell in between), its
// standard output discarded and its errors written to errors_path. Returns its process id,
// or -1 with the reason in `why`.
pid_t start_gnuplot(const std::string& program, const fs::path& script_path, const fs::path& png,
                    const fs::path& errors_path, std::string& why) {
  const std::string set_output = "set output " + quoted(png.string());
  const std::string script = script_path.string();
  std::string dash_e = "-e", name = program;
  char* argv[] = {name.data(), dash_e.data(), const_cast<char*>(set_output.c_str()),
                  const_cast<char*>(script.c_str()), nullptr};
  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  posix_spawn_file_actions_addopen(&files, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&files, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&files, STDERR_FILENO, errors_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  pid_t pid = -1;
  const int error = ::posix_spawnp(&pid, program.c_str(), &files, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&files);
  if (error == 0) return pid;
  why = std::strerror(error);
  return -1;
}

// Waits for gnuplot to end and returns its wait status; on a caught signal it kills gnuplot
// first (it has nothing left to finish). The short sleeps, rather than one blocking wait, are
// there because the signal may be handled by another thread, which cannot wake this one.
int wait_for_gnuplot(pid_t pid, const SignalGuard& guard) {
  int status = 0;
  bool killed = false;
  for (;;) {
    if (guard.caught() && !killed) {
      ::kill(pid, SIGKILL);  // fails only if gnuplot is already gone (Ctrl-C reaches it too)
      killed = true;
    }
    const pid_t done = ::waitpid(pid, &status, killed ? 0 : WNOHANG);
    if (done == pid) return status;
    if (done < 0 && errno != EINTR) return -1;
    if (done == 0) {
      const timespec pause{0, 10 * 1000 * 1000};  // 10 ms; a signal cuts it short
      ::nanosleep(&pause, nullptr);
    }
  }
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

void check_figure_destination(const std::string& png_path, const char* op) {
  ag::check(!png_path.empty(), op, "the PNG path is empty");
  const fs::path path(png_path);
  std::error_code error;
  const fs::path folder = path.has_parent_path() ? path.parent_path() : fs::path(".");
  ag::check(fs::is_directory(folder, error), op, "cannot write '", png_path, "': folder '",
            folder.string(), "' does not exist");
  ag::check_destination(png_path, op);  // a link, a pipe, a device or a folder is refused
}

// [atomic-figure]
void run_gnuplot(const std::string& script, const std::string& png_path, const char* op,
                 const std::string& program) {
  check_figure_destination(png_path, op);
  ag::check(!program.empty(), op, "cannot draw '", png_path,
            "': gnuplot was not found on PATH (install the Debian package gnuplot-nox)");
  // From here until the figure is in place, a signal that would end the program first stops
  // gnuplot and removes its files (the guard is made before the folder, so it outlives it).
  SignalGuard signals;
  TempFolder folder(op);
  auto end_if_signalled = [&] {
    if (!signals.caught()) return;
    folder.remove();
    signals.pass_on();  // ends the program unless its own handler goes on
    throw ag::Error(std::string(op) + ": drawing '" + png_path + "' was interrupted");
  };
  const fs::path script_path = folder.path() / "figure.gp";
  const fs::path errors_path = folder.path() / "errors.txt";
  {
    std::ofstream out(script_path, std::ios::binary);
    out << script;
    ag::check(out.good(), op, "cannot write the gnuplot script for '", png_path, "' to '",
              script_path.string(), "'");
  }
  // gnuplot opens its output by name and follows links, so it draws inside the private folder
  // (mkdtemp: only this user can put anything there), never beside the figure. The PNG is
  // checked there and then copied into place by write_file_atomically: an exclusive temporary
  // beside the figure, flushed and renamed, so the file under the final name is always whole
  // and nothing planted in the figure's folder is followed or overwritten.
  const fs::path drawn = folder.path() / "figure.png";
  end_if_signalled();
  std::string reason;
  const pid_t pid = start_gnuplot(program, script_path, drawn, errors_path, reason);
  if (pid < 0)
    throw ag::Error(std::string(op) + ": gnuplot could not draw '" + png_path +
                    "': could not run '" + program + "' (" + reason +
                    "; is gnuplot-nox installed and working?)");
  const int status = wait_for_gnuplot(pid, signals);
  end_if_signalled();
  const int code = status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (code == 0) {
    const std::string problem = png_problem(drawn.string());
    if (problem.empty()) {
      ag::write_file_atomically(png_path, ag::read_file(drawn.string(), 1ULL << 32, "the figure"),
                                op);
      end_if_signalled();  // the figure is in place; the program still ends as it was told
      return;
    }
    reason = "the PNG it wrote is incomplete: " + problem;
    if (const std::string said = first_error(errors_path);
        !said.empty() && said.rfind("Warning", 0) != 0)
      reason += " (gnuplot: " + said + ")";
    const long long free = free_bytes(folder.path());
    if (free >= 0 && free < (1 << 20))
      reason += "; the disk of the temporary folder '" + folder.path().parent_path().string() +
                "' is full (" + std::to_string(free / 1024) + " KB free)";
  } else {
    reason = first_error(errors_path);
    if (reason.empty()) reason = code < 0 ? "it was killed" : "exit status " + std::to_string(code);
    reason += " (is gnuplot-nox installed and working?)";
  }
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
  check_figure_destination(png_path, op);  // before the script: a wrong path costs nothing
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
  check_figure_destination(png_path, op);  // before the script: a wrong path costs nothing
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
