// Figures as PNG files, drawn by gnuplot (Debian's gnuplot-nox): attention and encoding
// heatmaps, and line plots of training curves and accuracy against length.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ag/tensor.hpp"

namespace pe {

enum class Palette {
  viridis,   ///< perceptually uniform, for values like attention weights
  diverging  ///< blue-white-red around zero, for signed values (encodings, biases)
};

/// One matrix panel: rows x cols values, row-major. Row 0 is drawn at the top, as in a
/// matrix (query 0 at the top, key 0 at the left).
struct Heatmap {
  std::vector<double> values;
  std::int64_t rows = 0, cols = 0;
  std::string title;
  std::string x_label = "key position";
  std::string y_label = "query position";
  std::optional<std::pair<double, double>> range;  ///< colour range; default: the data's
  Palette palette = Palette::viridis;
};

/// A heatmap of a tensor whose shape is [rows, cols] after dropping leading axes of extent 1.
Heatmap heatmap_from(const ag::Tensor& matrix);

/// Several heatmaps in a grid (columns = 0 chooses), with an overall title.
void write_heatmaps(const std::string& png_path, const std::vector<Heatmap>& panels,
                    const std::string& title, int columns = 0);

struct Series {
  std::string label;
  std::vector<double> x, y;
};

void write_line_plot(const std::string& png_path, const std::vector<Series>& series,
                     const std::string& title, const std::string& x_label,
                     const std::string& y_label, bool log_y = false,
                     std::optional<std::pair<double, double>> y_range = std::nullopt);

/// True if the gnuplot program can be found.
bool gnuplot_available();

}  // namespace pe
