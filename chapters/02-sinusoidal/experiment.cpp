// Chapter 2's experiment: the sinusoidal table and its properties as figures, then the
// reference model trained with it on ShiftK and AlternatingChar.
//
//   ch02_experiment [--steps N] [--seed S] [--out DIR] [--retrain]   (--help for more)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string>

#include "chapters/02-sinusoidal/sinusoidal.hpp"
#include "lab/chapter_options.hpp"
#include "lab/chapter_registry.hpp"
#include "lab/figures.hpp"
#include "lab/reference_runs.hpp"

using ag::Tensor;

namespace {

constexpr std::int64_t kWidth = 256;  // the reference model's width C

Tensor table(std::int64_t length, pe::SinusoidalLayout layout = pe::SinusoidalLayout::interleaved) {
  return pe::sinusoidal_table(length, kWidth, 10000, layout, ag::Dtype::f64);
}

// The table of 128 positions in both layouts, side by side.
void table_figure(const std::string& path) {
  std::vector<pe::Heatmap> panels;
  for (auto layout : {pe::SinusoidalLayout::interleaved, pe::SinusoidalLayout::concatenated}) {
    pe::Heatmap h = pe::heatmap_from(table(128, layout), pe::sinusoidal_layout_name(layout));
    h.x_label = "dimension";
    h.y_label = "position pos";
    h.palette = pe::Palette::diverging;
    h.range = {{-1.0, 1.0}};
    panels.push_back(h);
  }
  pe::write_heatmaps(path, panels, "sinusoidal PE [128 positions, C = 256], base 10000", 2);
}

// A few sine columns 2i over position: frequency w_i = 10000^(-2i/C) falls as i grows.
void dimension_figure(const std::string& path) {
  const std::int64_t length = 128;
  const auto pe = table(length).to_vector();
  std::vector<pe::Series> series;
  for (std::int64_t i : {0, 16, 32, 48}) {
    const double period = 2 * M_PI * std::pow(10000.0, 2.0 * double(i) / double(kWidth));
    char label[80];
    std::snprintf(label, sizeof label, "dim %ld (i = %ld, period %.0f)", long(2 * i), long(i),
                  period);
    pe::Series s{label, {}, {}};
    for (std::int64_t pos = 0; pos < length; ++pos) {
      s.x.push_back(double(pos));
      s.y.push_back(pe[pos * kWidth + 2 * i]);
    }
    series.push_back(s);
  }
  pe::write_line_plot(path, series, "PE(pos, 2i) = sin(pos w_i): fast low, slow high",
                      "position pos", "PE(pos, dim)", false, {{-1.1, 1.1}});
}

// PE(m) . PE(m + r) against r, for three starting positions m: the curves coincide because
// the dot product is sum_i cos(r w_i), a function of r alone.
std::vector<pe::Series> dot_product_series(std::int64_t offsets) {
  const std::vector<std::int64_t> starts = {0, 100, 1000};
  const auto pe = table(starts.back() + offsets).to_vector();
  std::vector<pe::Series> series;
  for (std::int64_t m : starts) {
    pe::Series s{"m = " + std::to_string(m), {}, {}};
    for (std::int64_t r = 0; r < offsets; ++r) {
      double dot = 0;
      for (std::int64_t c = 0; c < kWidth; ++c)
        dot += pe[m * kWidth + c] * pe[(m + r) * kWidth + c];
      s.x.push_back(double(r));
      s.y.push_back(dot);
    }
    series.push_back(s);
  }
  return series;
}

}  // namespace

// What --help says.
constexpr const char* kAbout =
    "Chapter 2: the sinusoidal table and its properties as figures, then the reference "
    "model trained with it.";

void run(const pe::ChapterOptions& options) {
  table_figure(options.out + "/sinusoidal_table.png");
  dimension_figure(options.out + "/sinusoidal_dimensions.png");
  const auto dots = dot_product_series(256);
  pe::write_line_plot(options.out + "/sinusoidal_dot_product.png", dots,
                      "PE(m) . PE(m + r), C = 256: the same curve from every start m", "offset r",
                      "dot product");
  double spread = 0;  // how far the curves for different m are apart
  for (std::size_t r = 0; r < dots[0].y.size(); ++r)
    for (const auto& s : dots) spread = std::max(spread, std::abs(s.y[r] - dots[0].y[r]));
  std::printf("PE(m) . PE(m + r) for r = 0, 1, 4, 16, 64, 255: %.2f %.2f %.2f %.2f %.2f %.2f\n",
              dots[0].y[0], dots[0].y[1], dots[0].y[4], dots[0].y[16], dots[0].y[64],
              dots[0].y[255]);
  std::printf("largest difference between the curves of m = 0, 100, 1000: %.2e\n", spread);

  const auto runs = pe::train_reference_runs("sinusoidal", options);
  pe::print_reference_runs(
      "held-out token accuracy (256 sequences of 32), reference model with sinusoidal PE:", runs);
  std::printf("figures and runs in %s/\n", options.out.c_str());
}

int main(int argc, char** argv) {
  return pe::run_chapter_experiment(argc, argv, "ch02_experiment", kAbout, {.out = "results/ch02"},
                                    run);
}
