// Chapter 6's experiment: ALiBi's slopes and biases, then the reference model (1 head) and an
// 8-head variant trained with ALiBi on ShiftK and AlternatingChar.
//
//   ch06_experiment [--steps N] [--seed S] [--out DIR] [--retrain]   (--help for more)
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string>

#include "chapters/06-alibi/alibi.hpp"
#include "lab/chapter_options.hpp"
#include "lab/chapter_registry.hpp"
#include "lab/figures.hpp"
#include "lab/reference_runs.hpp"

using ag::Tensor;

namespace {

// One panel per head: the bias the hook adds for 32 positions. Above the diagonal (future
// keys) it is positive, but the causal mask replaces those entries with -infinity.
void bias_figure(std::int64_t heads, const std::string& path) {
  const std::int64_t T = 32;
  const Tensor bias = pe::alibi_bias(heads, T, T, 0, ag::Dtype::f64);
  const auto slopes = pe::alibi_slopes(heads);
  std::vector<pe::Heatmap> panels;
  for (std::int64_t h = 0; h < heads; ++h) {
    pe::Heatmap panel = pe::heatmap_from(ag::slice(bias, 0, h, h + 1));
    char title[80];
    std::snprintf(title, sizeof title, "head %ld: slope 1/%g", long(h + 1), 1.0 / slopes[h]);
    panel.title = title;
    panel.palette = pe::Palette::diverging;
    const double reach = slopes[h] * double(T - 1);
    panel.range = std::make_pair(-reach, reach);
    panels.push_back(panel);
  }
  pe::write_heatmaps(path, panels,
                     "ALiBi bias -slope_h (i - j), " + std::to_string(heads) +
                         " heads (upper triangle is masked afterwards)",
                     heads >= 4 ? 4 : int(heads));
}

// What the bias alone does to the weights of the last query (i = 31): key j's weight is
// multiplied by exp(-slope_h (i - j)) against the key at the query's own position.
void weight_factor_figure(std::int64_t heads, const std::string& path) {
  const std::int64_t i = 31;
  const auto slopes = pe::alibi_slopes(heads);
  std::vector<pe::Series> series;
  for (std::int64_t h = 0; h < heads; ++h) {
    char label[64];
    std::snprintf(label, sizeof label, "head %ld, slope 1/%g", long(h + 1), 1.0 / slopes[h]);
    pe::Series s{label, {}, {}};
    for (std::int64_t j = 0; j <= i; ++j) {
      s.x.push_back(double(j));
      s.y.push_back(std::exp(-slopes[h] * double(i - j)));
    }
    series.push_back(s);
  }
  pe::write_line_plot(path, series,
                      "ALiBi alone: weight factor exp(-slope (i - j)) for query i = 31",
                      "key position j", "factor against key j = i (log scale)", true);
}

}  // namespace

// What --help says.
constexpr const char* kAbout =
    "Chapter 6: ALiBi's slopes and biases, then the reference model (1 and 8 heads) trained"
    " with ALiBi.";

void run(const pe::ChapterOptions& options) {
  bias_figure(8, options.out + "/alibi_bias_8_heads.png");
  weight_factor_figure(8, options.out + "/alibi_weight_factor.png");
  for (std::int64_t heads : {1, 8}) {
    std::printf("H = %ld: slopes", long(heads));
    for (double s : pe::alibi_slopes(heads)) std::printf(" 1/%g", 1.0 / s);
    std::printf("; largest |bias| over 32 positions: %.4f (head 1) .. %.4f (head %ld)\n",
                31 * pe::alibi_slopes(heads).front(), 31 * pe::alibi_slopes(heads).back(),
                long(heads));
  }

  std::vector<pe::ReferenceGroup> groups;
  for (std::int64_t heads : {1, 8})  // the reference model's single head, then 8 heads
    groups.push_back({{"shiftk", "alternating"},
                      "-h" + std::to_string(heads),
                      [heads](pe::TrainConfig& c) { c.model.heads = heads; }});
  const std::vector<pe::ReferenceRun> runs = pe::train_reference_runs("alibi", options, groups);
  pe::print_reference_runs(
      "held-out token accuracy (256 sequences of 32), width 256, 1 layer, ALiBi:", runs);
  std::printf("figures and runs in %s/\n", options.out.c_str());
}

int main(int argc, char** argv) {
  return pe::run_chapter_experiment(argc, argv, "ch06_experiment", kAbout, {.out = "results/ch06"},
                                    run);
}
