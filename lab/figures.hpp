// Figures as PNG files, drawn by gnuplot's pngcairo terminal (Debian's gnuplot-nox):
// heatmaps of attention weights and encoding matrices, one panel or a grid of them, and
// line plots of training curves and accuracy against length.
//
// Each call writes its data and a gnuplot script to a temporary folder, runs gnuplot once,
// and removes the folder. gnuplot draws into a temporary file beside the PNG, which is renamed
// into place only once it is a complete PNG (png_check.hpp): the file under the final name is
// always whole, on a full disk too. Bad input throws ag::Error before gnuplot runs; a missing
// gnuplot, a gnuplot error or an incomplete PNG throws ag::Error naming the PNG and why.
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

/// Runs a gnuplot script that draws png_path, for figures the functions above do not draw.
/// The script sets its terminal (pngcairo) but not its output: run_gnuplot points the output
/// at a temporary file beside png_path, checks that gnuplot wrote a complete PNG there, and
/// renames it into place. Throws ag::Error (prefixed by `op`) if the program is missing,
/// gnuplot reports an error, or the PNG is incomplete (then no file is left under either
/// name, and a figure already at png_path stays as it was). `program` is the gnuplot binary
/// to run ("" means: not found).
void run_gnuplot(const std::string& script, const std::string& png_path,
                 const char* op = "run_gnuplot", const std::string& program = gnuplot_path());

}  // namespace pe
