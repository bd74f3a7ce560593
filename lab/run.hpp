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

#include "base/build_record.hpp"
#include "lab/trainer.hpp"

namespace pe {

/// How run_training runs: where to, what to evaluate and save, what to show.
struct RunOptions {
  std::string out_dir;                     ///< created if missing
  std::vector<std::int64_t> eval_lengths;  ///< final accuracy at each; empty: the train length
  bool progress = true;                    ///< a progress bar (terminal) or plain lines (logs)
  bool figures = true;                     ///< write attention.png and curves.png
  /// Continue a saved run instead of starting one (the config passed is then ignored). The
  /// folder's own checkpoint.agt continues the run in place; any other checkpoint is continued
  /// as a copy, into a folder that holds no run (run_training).
  std::string resume_from;
  /// With resume_from: train until this many steps in all (0: the saved run's total).
  std::int64_t total_steps = 0;
  /// Start a new run from the weights of this checkpoint (Trainer::load_weights) instead of
  /// drawing them: a fine-tune. Recorded in run.json as "init_from".
  std::string init_from;
  /// A checkpoint every this many steps during training (0: only at the end), each written
  /// atomically over the last, so that a killed run resumes from it. Unset: the resumed run's
  /// own (Trainer::save_every, kept in its checkpoint), or 500 for a new run.
  std::optional<std::int64_t> save_every;
  /// Replace the run the folder holds, whatever it is (see run_training).
  bool overwrite = false;
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
/// atomically (run.json last), holding the folder's lock (folder_lock.hpp) from before its
/// first check of the folder to its last file. Every check that can fail before training
/// (configuration, task, memory, evaluation lengths, a writable folder, the run the folder
/// holds) comes first. A run's identity is its configuration and its history (how_trained),
/// which run.json and the checkpoint keep as "lineage" (its segments: the total steps of each,
/// the checkpoint it was fine-tuned from or resumed from). Unless options.overwrite, a run
/// replaces the run its folder holds only when that is the same run (the same configuration,
/// trained the same way), and --resume of the folder's own checkpoint continues it there (the
/// steps may grow); --resume of a checkpoint elsewhere continues that run as a copy and needs a
/// folder that holds no run (it says so on stderr; the checkpoint is left as it is). The files
/// of the run the folder held are then removed (run.json first), so that nothing of it is left
/// beside the new run (a run continued in place keeps its checkpoint until it saves). A run of
/// 0 steps is an untrained baseline: evaluated and written, without curves. A run that fails
/// removes the folder it created if nothing is in it, and a run that diverges keeps its last
/// checkpoint; its error says what was saved only when steps of it were lost or it resumed.
RunSummary run_training(const TrainConfig& config, const RunOptions& options);

/// How a run was trained besides its configuration, in words, from its lineage (run.cpp) and
/// its total steps: "" for a run trained from scratch (resumed, if at all, in its own folder
/// with the same total, which gives the tensors of the uninterrupted run), otherwise e.g.
/// "fine-tuned from 'a/checkpoint.agt'", "continued from 'a/checkpoint.agt' in another folder",
/// "trained on schedules of 100, then 150 steps (--resume --steps)", joined by ", ".
std::string how_trained(const nlohmann::json& lineage, std::int64_t steps);

/// Refuses (ag::Error, naming the folder and what differs) to start a run of `config` from
/// scratch in `out_dir` when the folder holds another run: a finished one (run.json) or an
/// unfinished one (a checkpoint.agt that reads back) of another configuration, or one trained
/// otherwise (a fine-tune, a copy, a run whose steps were raised); allowed with `overwrite`.
/// The task's vocabulary, which follows from the task, takes no part. A run.json without
/// "lineage" (an older version's) is a run from scratch, or a fine-tune when it has "init_from".
void check_previous_run(const TrainConfig& config, const std::string& out_dir, bool overwrite);

/// The summary of a run that finished in `out_dir` with exactly this configuration, trained
/// from scratch (its run.json and checkpoint.agt both present, the configuration in run.json
/// equal to `config`, how_trained of its lineage ""), or nothing: a fine-tune or a copy is
/// not a from-scratch row, and check_previous_run refuses to replace it unasked. Lets a long table
/// or experiment be rerun without retraining the runs it already has. A run.json that is not a
/// readable file of valid JSON, lacks its results, or holds a value out of its range (an accuracy
/// outside 0 .. 1, a negative or non-finite loss or time) is an error naming the file and the
/// value; a checkpoint that does not read back, or holds fewer steps, means the run is trained
/// again.
std::optional<RunSummary> load_finished_run(const TrainConfig& config, const std::string& out_dir);

/// One run of a list: its configuration and its folder.
struct PlannedRun {
  TrainConfig config;   ///< what to train
  std::string out_dir;  ///< where its files go
};

/// A run of the list, done: trained now, or taken from its folder.
struct FinishedRun {
  TrainConfig config;   ///< what was trained
  RunSummary summary;   ///< summary.out_dir is the run's folder
  bool reused = false;  ///< taken from its folder rather than trained now
};

/// How run_or_reuse goes through its list.
struct RunListOptions {
  /// Take a run that finished in its folder with exactly its configuration as it is.
  bool reuse = true;
  /// Runs trained at once: 1, one after the other with every OpenMP thread; more, each on a
  /// thread of its own with one OpenMP thread.
  int jobs = 1;
  /// Replace runs of other configurations that the folders hold (run_training).
  bool overwrite = false;
};

/// The one run-or-reuse path of `pe table` and the chapters' experiments. First everything is
/// checked, before the first run trains: two runs never share a folder, every configuration
/// can train (check_trainable: options, task, encoding, memory), a damaged or out-of-range
/// run.json is an error (load_finished_run), and no run would replace a run of another
/// configuration unasked (check_previous_run); then `checked` is called, if given. Each run is
/// taken as it is when it finished in its folder with exactly this configuration and
/// how.reuse is set, trained (run_training) otherwise. With jobs = 1 the runs train one after
/// the other with a progress display and every OpenMP thread; with jobs > 1, up to `jobs`
/// runs train at once on threads of their own, each with one OpenMP thread and no progress
/// bar (a run's numbers do not depend on the thread count). Says on stderr which run it is
/// at, and which ones it reuses. Returns the runs in the order given.
std::vector<FinishedRun> run_or_reuse(const std::vector<PlannedRun>& runs,
                                      const RunListOptions& how,
                                      const std::function<void()>& checked = {});

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

/// Accuracy at each length on the held-out set (Trainer::evaluate: at the positions the model
/// was trained at, or contiguous ones when asked).
std::map<std::int64_t, Evaluation> evaluate_lengths(
    Trainer& trainer, const std::vector<std::int64_t>& lengths, std::int64_t sequences,
    EvalPositions positions = EvalPositions::as_trained);

}  // namespace pe
