// Chapter 7's experiment: the reference model with no positional encoding on ShiftK and
// AlternatingChar (1 layer), and on ShiftK with 8 layers; accuracy curves, attention
// heatmaps, and a linear probe of position at every depth of the trained models.
//
//   ch07_experiment [--steps N] [--seed S] [--out DIR] [--retrain]   (--help for more)
//
// A run whose folder already holds a finished run of exactly the same configuration (run.json
// and checkpoint.agt) is loaded instead of trained again, and the output says so; --retrain
// trains it again.
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "chapters/07-nope/position_probe.hpp"
#include "lab/chapter_options.hpp"
#include "lab/chapter_registry.hpp"
#include "lab/figures.hpp"
#include "lab/reference_runs.hpp"

namespace {

// Held-out accuracy against step, from the history the checkpoint keeps.
pe::Series accuracy_curve(const pe::Trainer& trainer, const std::string& label) {
  pe::Series series{label, {}, {}};
  for (const pe::HistoryPoint& h : trainer.history()) {
    series.x.push_back(double(h.step));
    series.y.push_back(h.eval_accuracy);
  }
  return series;
}

}  // namespace

// What --help says.
constexpr const char* kAbout =
    "Chapter 7: the reference model with no positional encoding (1 and 8 layers), and a "
    "linear probe of position at every depth.";

void run(const pe::ChapterOptions& options) {
  // The reference model without an encoding on both tasks, then with 8 layers on ShiftK,
  // into <out>/shiftk-l1, alternating-l1 and shiftk-l8.
  std::vector<pe::ReferenceRun> runs = pe::train_reference_runs(
      "none", options,
      {{{"shiftk", "alternating"}, "-l1"},
       {{"shiftk"}, "-l8", [](pe::TrainConfig& c) { c.model.layers = 8; }}});

  std::vector<std::vector<pe::ProbeScore>> probes;  // per run: layer 0 = embedding, then blocks
  // [probe-runs]
  // Position probes: fitted on 256 held-out sequences, scored on 128 others (seeds that
  // neither the training stream nor the accuracy evaluation uses).
  const double ridge = 1e-3;
  for (pe::ReferenceRun& run : runs) {
    pe::Trainer& trainer = *run.trainer;
    const std::int64_t T = run.config.length;
    const ag::Indices fit = trainer.task().held_out(256, T, options.seed + 1000).inputs;
    const ag::Indices test = trainer.task().held_out(128, T, options.seed + 2000).inputs;
    probes.push_back(pe::probe_positions(trainer.model(), fit, test, ridge));
  }
  // [probe-runs]

  std::vector<pe::Series> curves, r2_lines, mae_lines;
  for (std::size_t k = 0; k < runs.size(); ++k) {
    const std::int64_t layers = runs[k].config.model.layers;
    const std::string label = "none, " + runs[k].config.task + ", " + std::to_string(layers) +
                              (layers == 1 ? " layer" : " layers");
    curves.push_back(accuracy_curve(*runs[k].trainer, label));
    pe::Series r2{label, {}, {}}, mae{label, {}, {}};
    for (std::size_t l = 0; l < probes[k].size(); ++l) {
      r2.x.push_back(double(l));
      r2.y.push_back(probes[k][l].r2);
      mae.x.push_back(double(l));
      mae.y.push_back(probes[k][l].mae);
    }
    r2_lines.push_back(r2);
    mae_lines.push_back(mae);
  }
  pe::write_line_plot(options.out + "/accuracy_curves.png", curves,
                      "no positional encoding: held-out token accuracy", "step", "accuracy", false,
                      std::make_pair(0.0, 1.0));
  pe::write_line_plot(options.out + "/probe_r2.png", r2_lines,
                      "position probe: R^2 on held-out sequences", "layer (0 = embedding)", "R^2",
                      false, std::make_pair(-0.1, 1.0));
  pe::write_line_plot(options.out + "/probe_mae.png", mae_lines,
                      "position probe: mean absolute error", "layer (0 = embedding)",
                      "mean |position - prediction|");

  pe::print_reference_runs(
      "held-out token accuracy (256 sequences of 32), no positional encoding:", runs, 6);
  std::printf("\nlinear probe of the position (ridge %g; fit on 256 sequences, scored on 128):\n",
              ridge);
  for (std::size_t k = 0; k < runs.size(); ++k) {
    std::printf("%s-l%ld\n  layer:", runs[k].config.task.c_str(),
                long(runs[k].config.model.layers));
    for (std::size_t l = 0; l < probes[k].size(); ++l) std::printf(" %7zu", l);
    std::printf("\n  R^2:  ");
    for (const auto& s : probes[k]) std::printf(" %7.3f", s.r2);
    std::printf("\n  MAE:  ");
    for (const auto& s : probes[k]) std::printf(" %7.2f", s.mae);
    std::printf("\n");
  }
  std::printf("figures and runs in %s/\n", options.out.c_str());
}

int main(int argc, char** argv) {
  return pe::run_chapter_experiment(argc, argv, "ch07_experiment", kAbout, {.out = "results/ch07"},
                                    run);
}
