// Chapter 10's plan: the rows of its tables, the tasks (the three where positions counted by
// content should matter, and chapter 8's three), the test sets that lie outside the training
// distribution, and where each run lives. On chapter 8's bench (the same model, training length,
// evaluation lengths and seeds). In a library of its own, so that the tests check what the
// experiment trains without training it.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "chapters/08-length/length_plan.hpp"
#include "lab/run.hpp"
#include "lab/trainer.hpp"

namespace pe::ch10 {

// [content-plan]
/// One row of the tables: an encoding in chapter 8's model (2 layers, 8 heads of width 8).
struct Row {
  std::string name;      ///< the row's name in the tables
  std::string encoding;  ///< a registered encoding
  std::string chapter;   ///< the chapter that adds it
};
inline const std::vector<Row> kRows = {
    {"none", "none", "7"}, {"rope", "rope", "5"},  {"alibi", "alibi", "6"},
    {"fire", "fire", "9"}, {"cope", "cope", "10"}, {"fox", "fox", "10"},
};
// The tasks where what counts is content: Flip-Flop (the last written bit, however many
// ignore instructions lie between), selective copy (the letters among blanks, in order) and
// counting (a variable's increments among dummy statements); then chapter 8's three.
inline const std::vector<std::string> kContentTasks = {"flipflop", "selcopy", "counting"};
inline const std::vector<std::string> kLengthTasks = {"shiftk", "copy", "charlm"};
/// A test set outside the training distribution: the task with other options.
struct OutOfDistribution {
  std::string name;                            ///< in the tables ("flipflop, sparse")
  std::string task;                            ///< the task it varies
  std::map<std::string, std::string> options;  ///< the options that differ from training's
};
// Liu et al.'s two Flip-Flop test sets: sparse (98% ignore instructions, long gaps between a
// write and its read) and dense (10%); training draws 80%. Counting with more variables than
// training's three (as the CoPE paper tests), and selective copy with more letters to copy
// than training's eight.
inline const std::vector<OutOfDistribution> kOutOfDistribution = {
    {"flipflop, sparse", "flipflop", {{"ignore", "0.98"}}},
    {"flipflop, dense", "flipflop", {{"ignore", "0.1"}}},
    {"counting, 5 variables", "counting", {{"vars", "5"}}},
    {"selcopy, 12 letters", "selcopy", {{"count", "12"}}},
};
// [content-plan]

/// Chapter 8's configuration of a two-layer row (length_config) for the row's encoding.
TrainConfig content_config(const Row& row, const std::string& task, std::int64_t steps,
                           std::uint64_t seed);

/// One training of the experiment: the row it belongs to and the run.
struct ContentRun {
  Row row;         ///< the row
  PlannedRun run;  ///< its configuration and folder `<out>/runs/<task>/<encoding>-s<seed>`
};

/// Every training, seed by seed, each seed task by task (kContentTasks, then kLengthTasks), each
/// task the rows of kRows. The charlm runs read `corpus` and have `vocabulary` tokens.
std::vector<ContentRun> plan_content_runs(const std::string& out, std::uint64_t first_seed,
                                          std::int64_t seeds, std::int64_t steps,
                                          const std::string& corpus, std::int64_t vocabulary);

}  // namespace pe::ch10
