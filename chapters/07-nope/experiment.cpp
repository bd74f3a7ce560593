// Chapter 7's experiment: the reference model with no positional encoding on ShiftK and
// AlternatingChar (1 layer), and on ShiftK with 8 layers; accuracy curves, attention
// heatmaps, and a linear probe of position at every depth of the trained models.
//
//   ch07_experiment [--steps N] [--seed S] [--out DIR] [--retrain]
//
// A run whose folder already holds a finished run of exactly the same configuration (run.json
// and checkpoint.agt) is loaded instead of trained again, and the output says so; --retrain
// trains it again.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "chapter_options.hpp"
#include "chapter_registry.hpp"
#include "figures.hpp"
#include "position_probe.hpp"
#include "run.hpp"

namespace {

struct ChapterRun {
  std::string name, task;
  std::int64_t layers;
  pe::TrainConfig config;
  pe::RunSummary summary;
  bool reused = false;
  std::unique_ptr<pe::Trainer> trainer;  // the trained model, loaded from its checkpoint
  std::vector<pe::ProbeScore> probe;     // layer 0 = embedding, then after each block
};

// Held-out accuracy against step, read back from a run's history.csv
// (step,train_loss,lr,eval_accuracy,eval_loss,seconds).
pe::Series accuracy_curve(const std::string& csv_path, const std::string& label) {
  std::ifstream in(csv_path);
  ag::check(in.good(), "ch07_experiment", "cannot read '", csv_path, "'");
  pe::Series series{label, {}, {}};
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::stringstream fields(line);
    std::string step, train_loss, lr, accuracy;
    std::getline(fields, step, ',');
    std::getline(fields, train_loss, ',');
    std::getline(fields, lr, ',');
    std::getline(fields, accuracy, ',');
    series.x.push_back(std::stod(step));
    series.y.push_back(std::stod(accuracy));
  }
  ag::check(!series.x.empty(), "ch07_experiment", "'", csv_path, "' holds no evaluations");
  return series;
}

// [reuse-or-train]
// Trains the run, or loads it if its folder holds a finished run of this configuration.
void train_or_reuse(ChapterRun& run, const std::string& out, bool retrain) {
  const std::string dir = out + "/" + run.name;
  // The trainer stores the task's vocabulary in the configuration; set it so that the
  // comparison with a finished run's run.json sees the same numbers.
  run.config.model.vocab = pe::make_task(run.task)->vocab_size();
  std::optional<pe::RunSummary> earlier;
  if (!retrain) earlier = pe::load_finished_run(run.config, dir);
  if (earlier) {
    run.summary = *earlier;
    run.reused = true;
    std::printf("%-15s reusing the finished run in %s (same configuration)\n", run.name.c_str(),
                dir.c_str());
  } else {
    std::printf("%-15s training into %s\n", run.name.c_str(), dir.c_str());
    std::fflush(stdout);
    pe::RunOptions where;
    where.out_dir = dir;
    run.summary = pe::run_training(run.config, where);
  }
  run.trainer = pe::Trainer::resume(dir + "/checkpoint.agt");
}
// [reuse-or-train]

}  // namespace

int main(int argc, char** argv) {
  pe::ChapterOptions options;
  try {
    options = pe::parse_chapter_options(argc, argv, "results/ch07");
  } catch (const std::exception& e) {
    std::cerr << "ch07_experiment: " << e.what() << "\n";
    return 2;
  }
  try {
    pe::register_chapter_encodings();
    std::filesystem::create_directories(options.out);
    std::vector<ChapterRun> runs;
    for (auto [task, layers] :
         {std::pair<std::string, std::int64_t>{"shiftk", 1}, {"alternating", 1}, {"shiftk", 8}}) {
      ChapterRun run;
      run.name = task + "-l" + std::to_string(layers);
      run.task = task;
      run.layers = layers;
      run.config.task = task;  // otherwise the reference run: 1 head, width 256, length 32
      run.config.encoding = "none";
      run.config.model.layers = layers;
      run.config.steps = options.steps;
      run.config.seed = options.seed;
      runs.push_back(std::move(run));
    }
    for (ChapterRun& run : runs) train_or_reuse(run, options.out, options.retrain);

    // [probe-runs]
    // Position probes: fitted on 256 held-out sequences, scored on 128 others (seeds that
    // neither the training stream nor the accuracy evaluation uses).
    const double ridge = 1e-3;
    for (ChapterRun& run : runs) {
      const pe::Task& task = run.trainer->task();
      const std::int64_t T = run.config.length;
      const ag::Indices fit = task.held_out(256, T, options.seed + 1000).inputs;
      const ag::Indices test = task.held_out(128, T, options.seed + 2000).inputs;
      run.probe = pe::probe_positions(run.trainer->model(), fit, test, ridge);
    }
    // [probe-runs]

    std::vector<pe::Series> curves, r2_lines, mae_lines;
    for (ChapterRun& run : runs) {
      const std::string label = "none, " + run.task + ", " + std::to_string(run.layers) +
                                (run.layers == 1 ? " layer" : " layers");
      curves.push_back(accuracy_curve(options.out + "/" + run.name + "/history.csv", label));
      pe::write_attention_figure(*run.trainer, run.config.length,
                                 options.out + "/attention_" + run.name + ".png");
      pe::Series r2{label, {}, {}}, mae{label, {}, {}};
      for (std::size_t l = 0; l < run.probe.size(); ++l) {
        r2.x.push_back(double(l));
        r2.y.push_back(run.probe[l].r2);
        mae.x.push_back(double(l));
        mae.y.push_back(run.probe[l].mae);
      }
      r2_lines.push_back(r2);
      mae_lines.push_back(mae);
    }
    pe::write_line_plot(options.out + "/accuracy_curves.png", curves,
                        "no positional encoding: held-out token accuracy", "step", "accuracy",
                        false, std::make_pair(0.0, 1.0));
    pe::write_line_plot(options.out + "/probe_r2.png", r2_lines,
                        "position probe: R^2 on held-out sequences",
                        "layer (0 = embedding)", "R^2", false, std::make_pair(-0.1, 1.0));
    pe::write_line_plot(options.out + "/probe_mae.png", mae_lines,
                        "position probe: mean absolute error", "layer (0 = embedding)",
                        "mean |position - prediction|");

    std::printf("\nheld-out token accuracy (256 sequences of 32), no positional encoding:\n");
    for (const ChapterRun& run : runs) {
      const pe::Evaluation& e = run.summary.final.at(run.config.length);
      std::printf(
          "none  %-12s %ld layer%s  %5ld steps  seed %lu  accuracy %.4f  loss %.4f  "
          "(%.0f s training%s)\n",
          run.task.c_str(), long(run.layers), run.layers == 1 ? " " : "s", long(run.config.steps),
          (unsigned long)run.config.seed, e.accuracy, e.loss, run.summary.train_seconds,
          run.reused ? ", reused run" : "");
    }
    std::printf("\nlinear probe of the position (ridge %g; fit on 256 sequences, scored on 128):\n",
                ridge);
    for (const ChapterRun& run : runs) {
      std::printf("%s\n  layer:", run.name.c_str());
      for (std::size_t l = 0; l < run.probe.size(); ++l) std::printf(" %7zu", l);
      std::printf("\n  R^2:  ");
      for (const auto& s : run.probe) std::printf(" %7.3f", s.r2);
      std::printf("\n  MAE:  ");
      for (const auto& s : run.probe) std::printf(" %7.2f", s.mae);
      std::printf("\n");
    }
    // Where each layer looks, on average over 256 held-out sequences: the weight on the key r
    // positions back, r = 0 .. 6.
    std::printf("\nmean attention weight on the key r positions back, r = 0 .. 6:\n");
    for (ChapterRun& run : runs) {
      const auto by_offset = pe::mean_attention(*run.trainer, run.config.length, 256,
                                                pe::AttentionAxis::offset);
      for (std::size_t l = 0; l < by_offset.size(); ++l) {
        std::printf("%-15s layer %zu:", run.name.c_str(), l + 1);
        for (std::int64_t r = 0; r <= 6; ++r) std::printf(" %.3f", by_offset[l][0][r]);
        std::printf("\n");
      }
    }
    std::printf("figures and runs in %s/\n", options.out.c_str());
  } catch (const std::exception& e) {
    std::cerr << "ch07_experiment: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
