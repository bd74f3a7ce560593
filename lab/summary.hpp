// The summary of a chapter's experiment: the numbers its text quotes, in one small JSON file
// that is committed beside the chapter (chapters/NN-name/results/summary.json), so that
// `programs/tools/results.py` can regenerate the quoted blocks and fail a test when text and runs
// differ.
//
//   {
//     "experiment": "ch02_experiment", "steps": 1500, "seed": 1,
//     "versions": {...},                 what built the program (lab notebook, not teaching)
//     "output": ["line", ...],           everything the experiment printed on stdout
//     "runs": {"shiftk": {...}, ...},    per run: accuracy, loss, attention averages, history
//     "values": {"name": 0.25, ...}      further numbers an experiment records by name
//   }
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "base/stdout_capture.hpp"
#include "lab/run.hpp"

namespace pe {

/// The summary the running experiment fills: the frame (run_chapter_experiment) sets the
/// experiment's name and options and the captured output, train_reference_runs adds its
/// runs, and an experiment may add values of its own. One per process.
nlohmann::json& experiment_summary();

/// Records a number under summary["values"][name] (for a sentence of the text that quotes it).
void record_summary_value(const std::string& name, double value);

/// Records a finished run under summary["runs"][name]: its configuration's main fields,
/// accuracy and loss at the training length, training time, whether it was reused, and, when
/// given, the held-out accuracy after each evaluation (from the trainer's history) and the
/// attention averages.
void record_summary_run(const std::string& name, const FinishedRun& run,
                        const Trainer* trainer = nullptr,
                        const AttentionAverages* attention = nullptr);

}  // namespace pe
