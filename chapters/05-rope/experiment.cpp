// Chapter 5's experiment: RoPE's angles and the decay of q.k with distance, then the
// reference model trained with RoPE on ShiftK and AlternatingChar.
//
//   ch05_experiment [--steps N] [--seed S] [--out DIR] [--retrain]   (--help for more)
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string>

#include "chapters/05-rope/rope.hpp"
#include "lab/chapter_options.hpp"
#include "lab/chapter_registry.hpp"
#include "lab/figures.hpp"
#include "lab/reference_runs.hpp"

using ag::Tensor;

namespace {

// The angle m * theta_i of a few planes i of a head of width 256 (the reference model's),
// against the position m, with one full turn (2 pi) for reference.
void angle_figure(const std::string& path) {
  const std::int64_t d = 256, length = 64;
  const auto theta = pe::rope_frequencies(d, 10000);
  std::vector<pe::Series> series;
  for (std::int64_t i : {0, 8, 16, 32, 64, 127}) {
    pe::Series s{"plane i = " + std::to_string(i), {}, {}};
    for (std::int64_t m = 1; m < length; ++m) {
      s.x.push_back(double(m));
      s.y.push_back(double(m) * theta[i]);
    }
    series.push_back(s);
  }
  series.push_back({"one full turn, 2 pi", {1.0, double(length - 1)}, {2 * M_PI, 2 * M_PI}});
  pe::write_line_plot(path, series,
                      "RoPE angles m theta_i of a head of width 256, theta_i = 10000^{-2i/256}",
                      "position m", "angle (radians, log scale)", true);
}

// q = k = (1, ..., 1) of width d, rotated to positions 0 and r: the score q_0 . k_r against r,
// divided by its value at r = 0 (= the mean of cos(r theta_i) over the planes).
pe::Series decay_series(std::int64_t d, std::int64_t distances) {
  const auto [cos, sin] = pe::rope_tables(distances, d, 10000, ag::Dtype::f64);
  const Tensor ones = ag::ones({1, distances, d}, ag::Dtype::f64);
  const Tensor rotated = pe::apply_rotary(ones, 0, cos, sin, pe::RotaryLayout::adjacent);
  const auto v = rotated.to_vector();
  pe::Series s{"head width d = " + std::to_string(d), {}, {}};
  for (std::int64_t r = 0; r < distances; ++r) {
    double score = 0;
    for (std::int64_t c = 0; c < d; ++c) score += v[c] * v[r * d + c];  // q at 0, k at r
    s.x.push_back(double(r));
    s.y.push_back(score / double(d));
  }
  return s;
}

}  // namespace

// What --help says.
constexpr const char* kAbout =
    "Chapter 5: RoPE's angles and the decay of q.k with distance, then the reference model "
    "trained with RoPE.";

void run(const pe::ChapterOptions& options) {
  angle_figure(options.out + "/rope_angles.png");
  const pe::Series wide = decay_series(256, 1024), narrow = decay_series(32, 1024);
  // the wide head drawn last, on top of the noisier narrow one
  pe::write_line_plot(options.out + "/rope_decay.png", {narrow, wide},
                      "RoPE: q_0 . k_r / (q . k) for q = k = (1, ..., 1)",
                      "relative distance r = n - m", "normalised score");
  std::printf(
      "q = k = ones, width 256: normalised score at r = 1, 4, 16, 64, 256, 1023: "
      "%.3f %.3f %.3f %.3f %.3f %.3f\n",
      wide.y[1], wide.y[4], wide.y[16], wide.y[64], wide.y[256], wide.y[1023]);

  const auto runs = pe::train_reference_runs("rope", options);
  pe::print_reference_runs(
      "held-out token accuracy (256 sequences of 32), reference model with RoPE:", runs);
  std::printf("figures and runs in %s/\n", options.out.c_str());
}

int main(int argc, char** argv) {
  return pe::run_chapter_experiment(argc, argv, "ch05_experiment", kAbout, {.out = "results/ch05"},
                                    run);
}
