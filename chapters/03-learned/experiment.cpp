// Chapter 3's experiment: the reference model trained with a learned position table on
// ShiftK and AlternatingChar, then what the table learned: the table itself and the cosine
// similarity between its rows, next to the same picture for the untrained table.
//
//   ch03_experiment [--steps N] [--seed S] [--out DIR] [--retrain]   (--help for more)
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string>

#include "ag/random.hpp"
#include "chapters/03-learned/learned.hpp"
#include "lab/chapter_options.hpp"
#include "lab/chapter_registry.hpp"
#include "lab/figures.hpp"
#include "lab/reference_runs.hpp"

using ag::Tensor;

namespace {

// [cosine-similarity]
// S[i, j] = cos(angle between rows i and j of table [T, C]), in double.
std::vector<double> cosine_similarity(const Tensor& table) {
  const std::int64_t rows = table.size(0), cols = table.size(1);
  const auto t = table.to_vector();
  std::vector<double> norm(rows, 0.0), s(rows * rows);
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t c = 0; c < cols; ++c) norm[i] += t[i * cols + c] * t[i * cols + c];
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < rows; ++j) {
      double dot = 0;
      for (std::int64_t c = 0; c < cols; ++c) dot += t[i * cols + c] * t[j * cols + c];
      s[i * rows + j] = dot / std::sqrt(norm[i] * norm[j]);
    }
  return s;
}
// [cosine-similarity]

// The mean of S[i, i + r] over i: how alike rows r apart are.
double mean_similarity_at(const std::vector<double>& s, std::int64_t rows, std::int64_t r) {
  double sum = 0;
  for (std::int64_t i = 0; i + r < rows; ++i) sum += s[i * rows + i + r];
  return sum / double(rows - r);
}

pe::Heatmap similarity_panel(const std::vector<double>& s, std::int64_t rows,
                             const std::string& title) {
  pe::Heatmap h;
  h.values = s;
  h.rows = h.cols = rows;
  h.title = title;
  h.x_label = "position j";
  h.y_label = "position i";
  h.palette = pe::Palette::diverging;
  h.range = {{-1.0, 1.0}};
  return h;
}

// The mean length of the table's rows.
double mean_row_norm(const Tensor& table) {
  const std::int64_t rows = table.size(0), cols = table.size(1);
  const auto t = table.to_vector();
  double sum = 0;
  for (std::int64_t i = 0; i < rows; ++i) {
    double sq = 0;
    for (std::int64_t c = 0; c < cols; ++c) sq += t[i * cols + c] * t[i * cols + c];
    sum += std::sqrt(sq);
  }
  return sum / double(rows);
}

// The position table of a model with the learned encoding.
Tensor position_table(pe::Trainer& trainer) {
  const auto* learned = dynamic_cast<const pe::LearnedEncoding*>(trainer.model().encoding.get());
  if (!learned) throw std::runtime_error("the run was not trained with the learned encoding");
  return learned->table.detach();
}

}  // namespace

// What --help says.
constexpr const char* kAbout =
    "Chapter 3: the reference model trained with a learned position table, then what the "
    "table learned.";

void run(const pe::ChapterOptions& options) {
  // A table of 32 rows has no row 32: the error the reader meets at length 33.
  ag::Rng rng(options.seed);
  const pe::LearnedEncoding short_table(32, 256, rng);
  try {
    short_table.embed(ag::zeros({1, 33, 256}), 0);
  } catch (const ag::Error& e) {
    std::printf("a sequence of 33 with max_len 32: %s\n", e.what());
  }

  const auto runs = pe::train_reference_runs("learned", options);
  const std::int64_t length = runs.front().config.length;

  // The untrained table, drawn exactly as the trainer draws it (same seed, same stream).
  std::vector<pe::Heatmap> panels, table_panels;
  {
    pe::Trainer untrained(runs.front().config);  // drawn as the run drew it, before any step
    const Tensor fresh = position_table(untrained);
    const auto s = cosine_similarity(fresh);
    panels.push_back(similarity_panel(s, length, "untrained (N(0, 0.02^2))"));
    std::printf("\nuntrained: mean row length %.3f\n", mean_row_norm(fresh));
    std::printf(
        "untrained: mean cosine similarity of rows r apart, r = 1, 2, 4, 8, 16: "
        "%.3f %.3f %.3f %.3f %.3f\n",
        mean_similarity_at(s, length, 1), mean_similarity_at(s, length, 2),
        mean_similarity_at(s, length, 4), mean_similarity_at(s, length, 8),
        mean_similarity_at(s, length, 16));
  }
  for (const auto& run : runs) {
    const Tensor table = position_table(*run.trainer);
    const auto s = cosine_similarity(table);
    std::printf("%-11s: mean row length %.3f\n", run.config.task.c_str(), mean_row_norm(table));
    panels.push_back(similarity_panel(s, length, "trained on " + run.config.task));
    std::printf(
        "%-11s: mean cosine similarity of rows r apart, r = 1, 2, 4, 8, 16: "
        "%.3f %.3f %.3f %.3f %.3f\n",
        run.config.task.c_str(), mean_similarity_at(s, length, 1), mean_similarity_at(s, length, 2),
        mean_similarity_at(s, length, 4), mean_similarity_at(s, length, 8),
        mean_similarity_at(s, length, 16));
    // The first 64 of the 256 columns: all of them would draw a strip too thin to read.
    pe::Heatmap h = pe::heatmap_from(ag::slice(table, 1, 0, 64), "trained on " + run.config.task);
    h.x_label = "dimension (0 .. 63 of 256)";
    h.y_label = "position";
    h.palette = pe::Palette::diverging;
    table_panels.push_back(h);
  }
  pe::write_heatmaps(options.out + "/learned_table.png", table_panels,
                     "the learned position table after training", 2);
  pe::write_heatmaps(options.out + "/learned_similarity.png", panels,
                     "cosine similarity between the rows of the position table", 3);

  pe::print_reference_runs(
      "held-out token accuracy (256 sequences of 32), reference model with a learned table:", runs);
  std::printf("figures and runs in %s/\n", options.out.c_str());
}

int main(int argc, char** argv) {
  return pe::run_chapter_experiment(argc, argv, "ch03_experiment", kAbout, {.out = "results/ch03"},
                                    run);
}
