// The loop every encoding chapter's experiment ends with: the reference model trained with
// one encoding on ShiftK and AlternatingChar, one run folder per task, and a line of
// results per run for the chapter text.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "lab/chapter_options.hpp"
#include "lab/run.hpp"

namespace pe {

/// One trained reference run of a chapter's experiment, with what the chapter reads from it.
struct ReferenceRun {
  TrainConfig config;   ///< the run's configuration
  RunSummary summary;   ///< its results
  std::string run_dir;  ///< `<out>/<task><suffix>`: run.json, checkpoint.agt, attention.png, ...
  std::string line;     ///< "sinusoidal  shiftk  1500 steps  seed 1  accuracy 1.0000 ..."
  std::unique_ptr<Trainer> trainer;  ///< the trained model, loaded from checkpoint.agt
  AttentionAverages attention;       ///< mean_attention on 256 held-out sequences
};

/// The reference run of `encoding` on `task`: TrainConfig's defaults (1 layer, 1 head, width
/// 256, length 32), options.steps and options.seed.
TrainConfig reference_config(const std::string& encoding, const std::string& task,
                             const ChapterOptions& options);

/// A group of a chapter's reference runs: the tasks, the suffix of their folders, and how the
/// group's configuration differs from the reference (e.g. the number of heads).
struct ReferenceGroup {
  std::vector<std::string> tasks = {"shiftk", "alternating"};  ///< one run per task
  std::string suffix = "";                                     ///< folders `<task><suffix>`
  std::function<void(TrainConfig&)> adjust = {};               ///< applied to each config
};

/// Trains `encoding` on each task of each group with the reference configuration
/// (TrainConfig's defaults, options.steps and options.seed), after the group's `adjust` (if
/// any) has changed the configuration. Runs go to `<options.out>/<task><suffix>`; a run
/// already finished there with the same configuration is taken as it is unless
/// options.retrain is set (run_or_reuse, one list for all groups: every run is checked before
/// the first one trains). Each run's attention figure is also copied to
/// `<options.out>/attention_<task><suffix>.png`.
std::vector<ReferenceRun> train_reference_runs(const std::string& encoding,
                                               const ChapterOptions& options,
                                               const std::vector<ReferenceGroup>& groups = {{}});

/// Prints a heading and the runs' result lines, then for every run, layer and head the mean
/// attention weight on the keys 0 .. max_offset positions back, and on keys 0 .. max_offset.
void print_reference_runs(const std::string& heading, const std::vector<ReferenceRun>& runs,
                          std::int64_t max_offset = 8);

}  // namespace pe
