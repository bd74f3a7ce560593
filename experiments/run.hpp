// One training run from start to finish, with everything it leaves behind in its folder:
//   run.json       configuration, seed, versions, metrics over steps, final accuracy per
//                  length, wall time
//   history.csv    the same metrics as a table
//   checkpoint.agt the trained model, optimiser and data streams (pe eval reads it)
//   attention.png  attention weights of every layer and head on one held-out sequence
//   curves.png     training loss and held-out accuracy over steps
#pragma once
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "trainer.hpp"

namespace pe {

/// How run_training runs: where to, what to evaluate and save, what to show.
struct RunOptions {
  std::string out_dir;                     ///< created if missing
  std::vector<std::int64_t> eval_lengths;  ///< final accuracy at each; empty: the train length
  bool progress = true;                    ///< a progress bar (terminal) or plain lines (logs)
  bool figures = true;                     ///< write attention.png and curves.png
  /// Continue a saved run instead of starting one (the config passed is then ignored).
  std::string resume_from;
  /// With resume_from: train until this many steps in all (0: the saved run's total).
  std::int64_t total_steps = 0;
  /// Start a new run from the weights of this checkpoint (Trainer::load_weights) instead of
  /// drawing them: a fine-tune. Recorded in run.json as "init_from".
  std::string init_from;
  /// A checkpoint every this many steps during training (0: only at the end), each written
  /// atomically over the last, so that a killed run resumes from it.
  std::int64_t save_every = 500;
  /// Time every op of the training steps (ag/profile.hpp) into RunSummary::profile.
  bool profile = false;
};

/// What a finished run reports (and writes to run.json).
struct RunSummary {
  std::string out_dir;                       ///< the run's folder
  std::map<std::int64_t, Evaluation> final;  ///< by evaluation length
  double train_seconds = 0;                  ///< time spent in training steps
  double wall_seconds = 0;                   ///< the whole run, evaluation and files included
  std::string profile;  ///< with RunOptions::profile: the table of ag::profile::format
};

/// Trains (or resumes) a run, then writes the files above into options.out_dir, each
/// atomically (run.json last). Every check that can fail before training (configuration,
/// memory, evaluation lengths, a writable folder) comes first; a run that fails removes the
/// folder it created if nothing is in it, and a run that diverges keeps its last checkpoint.
RunSummary run_training(const TrainConfig& config, const RunOptions& options);

/// The summary of a run that finished in `out_dir` with exactly this configuration (its
/// run.json and checkpoint.agt both present, the configuration in run.json equal to
/// `config`), or nothing. Lets a long table or experiment be rerun without retraining the
/// runs it already has. A run.json that is not valid JSON or lacks its results is an error; a
/// checkpoint that does not read back, or holds fewer steps, means the run is trained again.
std::optional<RunSummary> load_finished_run(const TrainConfig& config, const std::string& out_dir);

/// One run of a list: its configuration and its folder.
struct PlannedRun {
  TrainConfig config;   ///< what to train
  std::string out_dir;  ///< where its files go
};

/// A run of the list, done: trained now, or taken from its folder.
struct FinishedRun {
  TrainConfig config;  ///< what was trained
  RunSummary summary;  ///< summary.out_dir is the run's folder
  bool reused = false;  ///< taken from its folder rather than trained now
};

/// The one run-or-reuse path of `pe table` and the chapters' experiments: each run taken as
/// it is when it finished in its folder with exactly this configuration (load_finished_run)
/// and `reuse` is set, trained (run_training) otherwise. With jobs = 1 the runs train one
/// after the other with a progress display and every OpenMP thread; with jobs > 1, up to
/// `jobs` runs train at once on threads of their own, each with one OpenMP thread and no
/// progress bar (a run's numbers do not depend on the thread count). Says on stderr which run
/// it is at, and which ones it reuses. Returns the runs in the order given.
std::vector<FinishedRun> run_or_reuse(const std::vector<PlannedRun>& runs, bool reuse,
                                      int jobs = 1);

/// A finished run's result on one line, as the chapters print them: encoding, task, layers,
/// heads, steps, seed, held-out accuracy and loss at the training length, training time:
/// "sinusoidal  shiftk       1 layer  1 head    1500 steps  seed 1  accuracy 1.0000  loss 0.0002  (121 s)"
std::string result_line(const FinishedRun& run);

/// The attention weights of every layer, [1, H, T, T] each, on the first held-out sequence of
/// `length` tokens: what write_attention_figure draws (and the live pages redraw as a model
/// learns).
std::vector<ag::Tensor> held_out_attention(Trainer& trainer, std::int64_t length);

/// Heatmaps of a model's attention on one held-out sequence of the given length: one panel
/// per layer and head.
void write_attention_figure(Trainer& trainer, std::int64_t length, const std::string& png_path);

/// Where a trained model's attention goes on average, [layer][head][r or j] for r and j
/// from 0 to length-1: by_offset[l][h][r] is the mean weight on the key r positions back (over the
/// queries i >= r), by_key[l][h][j] the mean weight on key j (over the queries i >= j), both
/// over the held-out sequences. The numbers behind the chapters' sentences about where a
/// trained model looks.
struct AttentionAverages {
  std::vector<std::vector<std::vector<double>>> by_offset;  ///< [layer][head][r]
  std::vector<std::vector<std::vector<double>>> by_key;     ///< [layer][head][j]
};

/// AttentionAverages of the model on the first `sequences` held-out sequences of `length`
/// tokens, from one forward pass.
AttentionAverages mean_attention(Trainer& trainer, std::int64_t length, std::int64_t sequences);

/// Accuracy at each length on the held-out set.
std::map<std::int64_t, Evaluation> evaluate_lengths(Trainer& trainer,
                                                    const std::vector<std::int64_t>& lengths,
                                                    std::int64_t sequences);

/// What built this program (git commit at configure time, compiler, build type, SIMD target).
std::map<std::string, std::string> build_versions();

}  // namespace pe
