// Figures as PNG files, drawn by gnuplot's pngcairo terminal (Debian's gnuplot-nox):
// heatmaps of attention weights and encoding matrices, one panel or a grid of them, and
// line plots of training curves and accuracy against length.
//
// Each call writes its data and a gnuplot script to a private temporary folder (mkdtemp),
// runs gnuplot once (no shell: its arguments are passed as they are), and removes the folder.
// gnuplot draws into that folder, and only a complete PNG (png_check.hpp) is copied beside the
// figure into a temporary this process alone created (O_EXCL, never a planted file or link)
// and renamed into place (ag::write_file_atomically): the file under the final name is always
// whole, on a full disk too.
//
// Destinations: the PNG path must be missing or a regular file. A folder, a pipe (FIFO), a
// device (/dev/null) or a symbolic link is refused with a one-line ag::Error before any work,
// never replaced or written through (check_figure_destination; in a shared folder anyone could
// have put them there). Bad input throws ag::Error before gnuplot runs; a missing gnuplot, a
// gnuplot error or an incomplete PNG throws ag::Error naming the PNG and why.
//
// Signals: while gnuplot runs, SIGTERM, SIGINT and SIGHUP are caught (the program's own
// handlers are put back afterwards). One that comes stops gnuplot, removes the temporary
// folder, and is then passed on to the program's handler: by default the program ends, killed
// by that signal, leaving no gnuplot and no temporary file behind.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ag/tensor.hpp"

namespace pe {

/// The colour scale of a heatmap.
enum class Palette {
  viridis,   ///< perceptually uniform, dark to yellow: weights, probabilities
  diverging  ///< blue-white-red, white at zero: signed values (encodings, biases)
};

/// One matrix panel: rows x cols values, row-major. Row 0 is drawn at the top and column 0
/// at the left, as a matrix is written (query 0 at the top, key 0 at the left). Non-finite
/// values are left blank.
struct Heatmap {
  std::vector<double> values;              ///< [rows, cols], row-major
  std::int64_t rows = 0;                   ///< the matrix's rows
  std::int64_t cols = 0;                   ///< the matrix's columns
  std::string title;                       ///< above the panel
  std::string x_label = "key position";    ///< under the columns
  std::string y_label = "query position";  ///< beside the rows
  /// The colour scale's ends, e.g. {0, 1} for attention weights. Without it: the data's
  /// smallest and largest values (viridis), or -m..m with m the largest |value| (diverging).
  std::optional<std::pair<double, double>> range;
  Palette palette = Palette::viridis;  ///< the colour scale
};

/// matrix: [rows, cols] (leading axes of extent 1 are dropped: [1, 1, T, T] is fine).
Heatmap heatmap_from(const ag::Tensor& matrix, std::string title = {});

/// tensor: [..., rows, cols]; index picks one entry of every leading axis, e.g. {b, h} for
/// the attention weights [B, H, T, T] of batch element b and head h.
Heatmap heatmap_slice(const ag::Tensor& tensor, const std::vector<std::int64_t>& index,
                      std::string title = {});

/// Draws the panels in a grid of `columns` columns (0 chooses: up to 4 in a row, 8 panels
/// as 2 x 4), each with its own colour bar, under the title `suptitle` (may be empty).
/// About 480 x 440 pixels a panel.
void write_heatmaps(const std::string& png_path, const std::vector<Heatmap>& panels,
                    const std::string& suptitle, int columns = 0);

/// One curve: y[i] at x[i]. Non-finite y values leave a gap.
struct Series {
  std::string label;      ///< in the legend
  std::vector<double> x;  ///< positions along the x axis
  std::vector<double> y;  ///< values, one per x
};

/// The series as lines (with point markers when a series has at most 40 points),
/// 800 x 500 pixels. log_y needs every finite y > 0; y_range fixes the y axis.
void write_line_plot(const std::string& png_path, const std::vector<Series>& series,
                     const std::string& title, const std::string& x_label,
                     const std::string& y_label, bool log_y = false,
                     std::optional<std::pair<double, double>> y_range = std::nullopt);

/// The gnuplot program found on PATH (looked up once), or "" if there is none.
const std::string& gnuplot_path();

/// True if the gnuplot program can be found.
bool gnuplot_available();

/// Fails (ag::Error prefixed by `op`) unless png_path can receive a figure: not empty, in an
/// existing folder, and missing or a regular file (see the top of this file). The writers
/// below call it first; a command that works long before it draws (pe eval --plot) calls it
/// before that work.
void check_figure_destination(const std::string& png_path, const char* op);

/// Runs a gnuplot script that draws png_path, for figures the functions above do not draw.
/// The script sets its terminal (pngcairo) but not its output: run_gnuplot points the output
/// at a file in its private temporary folder, checks that gnuplot wrote a complete PNG there,
/// and puts it in place with ag::write_file_atomically. Throws ag::Error (prefixed by `op`) if the
/// program is missing, gnuplot reports an error, or the PNG is incomplete (then no file is left
/// under either name, and a figure already at png_path stays as it was). `program` is the gnuplot
/// binary to run ("" means: not found).
void run_gnuplot(const std::string& script, const std::string& png_path,
                 const char* op = "run_gnuplot", const std::string& program = gnuplot_path());

}  // namespace pe
