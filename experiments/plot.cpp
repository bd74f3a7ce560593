#include "plot.hpp"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "ag/error.hpp"

namespace pe {

namespace {

// Viridis' published control points (matplotlib's colormap).
constexpr const char* kViridis =
    "set palette defined (0 '#440154', 0.125 '#472d7b', 0.25 '#3b528b', 0.375 '#2c728e', "
    "0.5 '#21918c', 0.625 '#28ae80', 0.75 '#5ec962', 0.875 '#addc30', 1 '#fde725')\n";
constexpr const char* kDiverging =
    "set palette defined (-1 '#2166ac', -0.5 '#67a9cf', 0 '#f7f7f7', 0.5 '#ef8a62', "
    "1 '#b2182b')\n";

std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// A tick step that gives about eight labelled ticks.
std::int64_t tick_step(std::int64_t extent) {
  for (std::int64_t step : {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024})
    if (extent / step <= 8) return step;
  return 2048;
}

void check_writable(const std::string& png_path) {
  const auto parent = std::filesystem::path(png_path).parent_path();
  ag::check(parent.empty() || std::filesystem::is_directory(parent), "plot",
            "cannot write '", png_path, "': folder '", parent.string(), "' does not exist");
}

// Runs a gnuplot script; errors name the figure and gnuplot's first complaint.
void run_gnuplot(const std::string& script, const std::string& png_path) {
  ag::check(gnuplot_available(), "plot", "cannot draw '", png_path,
            "': gnuplot was not found (install the Debian package gnuplot-nox)");
  char script_path[] = "/tmp/pe-plot-XXXXXX";
  const int fd = mkstemp(script_path);
  ag::check(fd >= 0, "plot", "cannot create a temporary file for '", png_path, "'");
  close(fd);
  const std::string errors_path = std::string(script_path) + ".err";
  std::ofstream(script_path) << script;
  const std::string command =
      "gnuplot " + std::string(script_path) + " 2> " + errors_path;
  const int status = std::system(command.c_str());
  std::ifstream errors_file(errors_path);
  std::string first_error;
  std::getline(errors_file, first_error);
  std::remove(script_path);
  std::remove(errors_path.c_str());
  ag::check(status == 0 && std::filesystem::exists(png_path), "plot", "gnuplot could not draw '",
            png_path, "': ", first_error.empty() ? "no message" : first_error);
}

void check_panel(const Heatmap& panel) {
  ag::check(panel.rows > 0 && panel.cols > 0, "write_heatmaps", "panel '", panel.title,
            "' has no cells (", panel.rows, " x ", panel.cols, ")");
  ag::check(static_cast<std::int64_t>(panel.values.size()) == panel.rows * panel.cols,
            "write_heatmaps", "panel '", panel.title, "' has ", panel.values.size(),
            " values for ", panel.rows, " x ", panel.cols, " cells");
  if (panel.range)
    ag::check(panel.range->first < panel.range->second, "write_heatmaps", "panel '", panel.title,
              "' has an empty colour range");
}

}  // namespace

bool gnuplot_available() {
  static const bool found = std::system("command -v gnuplot > /dev/null 2>&1") == 0;
  return found;
}

Heatmap heatmap_from(const ag::Tensor& matrix) {
  ag::Shape shape;
  for (auto extent : matrix.shape())
    if (extent != 1 || !shape.empty()) shape.push_back(extent);
  while (shape.size() < 2) shape.insert(shape.begin(), 1);
  ag::check(shape.size() == 2, "heatmap_from", "needs a matrix, got shape ",
            ag::shape_string(matrix.shape()));
  Heatmap panel;
  panel.rows = shape[0];
  panel.cols = shape[1];
  panel.values = matrix.to_vector();
  return panel;
}

void write_heatmaps(const std::string& png_path, const std::vector<Heatmap>& panels,
                    const std::string& title, int columns) {
  ag::check(!panels.empty(), "write_heatmaps", "no panels to draw into '", png_path, "'");
  for (const auto& panel : panels) check_panel(panel);
  check_writable(png_path);
  const int count = static_cast<int>(panels.size());
  if (columns <= 0) columns = count <= 4 ? count : 4;
  const int rows = (count + columns - 1) / columns;
  std::ostringstream gp;
  gp.precision(9);
  gp << "set terminal pngcairo size " << 440 * columns << "," << 420 * rows + 40
     << " font 'DejaVu Sans,10'\n"
     << "set output " << quoted(png_path) << "\n"
     << "set multiplot layout " << rows << "," << columns << " title " << quoted(title)
     << " font 'DejaVu Sans,13'\n"
     << "set size square\nset tics out nomirror\nset key off\n";
  for (const auto& panel : panels) {
    gp << (panel.palette == Palette::viridis ? kViridis : kDiverging);
    gp << "set title " << quoted(panel.title) << "\n"
       << "set xlabel " << quoted(panel.x_label) << "\nset ylabel " << quoted(panel.y_label) << "\n"
       << "set xrange [-0.5:" << panel.cols - 0.5 << "]\n"
       << "set yrange [" << panel.rows - 0.5 << ":-0.5]\n"  // row 0 at the top
       << "set xtics 0," << tick_step(panel.cols) << "\nset ytics 0," << tick_step(panel.rows)
       << "\n";
    if (panel.range) gp << "set cbrange [" << panel.range->first << ":" << panel.range->second << "]\n";
    else if (panel.palette == Palette::diverging) {
      double largest = 0;
      for (double v : panel.values) largest = std::max(largest, std::abs(v));
      if (largest == 0) largest = 1;
      gp << "set cbrange [" << -largest << ":" << largest << "]\n";
    } else gp << "set autoscale cb\n";
    gp << "$cells << EOD\n";
    for (std::int64_t r = 0; r < panel.rows; ++r) {
      for (std::int64_t c = 0; c < panel.cols; ++c)
        gp << (c ? " " : "") << panel.values[r * panel.cols + c];
      gp << "\n";
    }
    gp << "EOD\nplot $cells matrix with image\n";
  }
  gp << "unset multiplot\n";
  run_gnuplot(gp.str(), png_path);
}

void write_line_plot(const std::string& png_path, const std::vector<Series>& series,
                     const std::string& title, const std::string& x_label,
                     const std::string& y_label, bool log_y,
                     std::optional<std::pair<double, double>> y_range) {
  ag::check(!series.empty(), "write_line_plot", "no series to draw into '", png_path, "'");
  for (const auto& s : series) {
    ag::check(s.x.size() == s.y.size(), "write_line_plot", "series '", s.label, "' has ",
              s.x.size(), " x values and ", s.y.size(), " y values");
    ag::check(!s.x.empty(), "write_line_plot", "series '", s.label, "' is empty");
    if (log_y)
      for (double y : s.y)
        ag::check(y > 0, "write_line_plot", "series '", s.label,
                  "' has a value <= 0 on a log scale");
  }
  check_writable(png_path);
  std::ostringstream gp;
  gp.precision(9);
  gp << "set terminal pngcairo size 800,500 font 'DejaVu Sans,11'\n"
     << "set output " << quoted(png_path) << "\n"
     << "set title " << quoted(title) << "\nset xlabel " << quoted(x_label)
     << "\nset ylabel " << quoted(y_label) << "\n"
     << "set grid\nset key bottom right box opaque\nset tics out nomirror\n";
  if (log_y) gp << "set logscale y\n";
  if (y_range) gp << "set yrange [" << y_range->first << ":" << y_range->second << "]\n";
  for (std::size_t i = 0; i < series.size(); ++i) {
    gp << "$s" << i << " << EOD\n";
    for (std::size_t k = 0; k < series[i].x.size(); ++k)
      gp << series[i].x[k] << " " << series[i].y[k] << "\n";
    gp << "EOD\n";
  }
  gp << "plot ";
  for (std::size_t i = 0; i < series.size(); ++i)
    gp << (i ? ", " : "") << "$s" << i << " with linespoints lw 2 pt 7 ps 0.6 title "
       << quoted(series[i].label);
  gp << "\n";
  run_gnuplot(gp.str(), png_path);
}

}  // namespace pe
