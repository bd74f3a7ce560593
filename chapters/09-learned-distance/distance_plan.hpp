// Chapter 9's plan: the rows of its tables on chapter 8's bench (the same model, tasks,
// lengths and seeds as chapter 8), the configuration every row trains with, and where each
// run lives. In a library of its own, so that the tests check what the experiment trains
// without training it.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "chapters/08-length/length_plan.hpp"
#include "lab/run.hpp"
#include "lab/trainer.hpp"

namespace pe::ch09 {

// [distance-plan]
// Ruoss et al.'s L_max: training positions are drawn from [0, 2048), four times their longest
// test sequence (500); ours is 512, so the same ratio.
constexpr std::int64_t kRandomPositionsMax = 2048;
// The distances at which the summary records each head's learned bias b(d).
inline const std::vector<std::int64_t> kBiasDistances = {0, 1, 2, 4, 8, 16, 31, 64, 128, 256, 511};

/// One row of the tables: an encoding with its options, trained with or without randomized
/// positions, in chapter 8's model (2 layers, 8 heads of width 8).
struct Row {
  std::string name;                                 ///< the row's name in the tables
  std::string encoding;                             ///< a registered encoding
  std::map<std::string, std::string> options = {};  ///< its options (`pe train -o`)
  std::int64_t random_positions = 0;                ///< L_max, or 0: positions 0 .. T-1
  bool from_chapter_8 = false;                      ///< a row of chapter 8, trained again beside
};
inline const std::vector<Row> kRows = {
    // chapter 8's rows that this chapter's encodings generalise or wrap
    {"sinusoidal", "sinusoidal", {}, 0, true},
    {"learned", "learned", {}, 0, true},
    {"t5", "t5", {}, 0, true},
    {"rope", "rope", {}, 0, true},
    {"alibi", "alibi", {}, 0, true},
    // the learned distance functions and xPos
    {"kerple", "kerple", {}, 0, false},
    {"kerple (power)", "kerple", {{"form", "power"}}, 0, false},
    {"fire", "fire", {}, 0, false},
    {"dpb", "dpb", {}, 0, false},
    {"xpos", "xpos", {}, 0, false},
    // randomized positions (Ruoss et al.) around four of chapter 8's encodings and FIRE (the
    // pair of Zhou et al.'s length-generalisation recipe)
    {"sinusoidal + rp", "sinusoidal", {}, kRandomPositionsMax, false},
    {"learned + rp", "learned", {}, kRandomPositionsMax, false},
    {"rope + rp", "rope", {}, kRandomPositionsMax, false},
    {"alibi + rp", "alibi", {}, kRandomPositionsMax, false},
    {"fire + rp", "fire", {}, kRandomPositionsMax, false},
};
// Does longer training close randomized positions' gap? Two rows on ShiftK, seed 1, trained
// kLongTraining times the steps of the others (3,000 instead of 500).
constexpr std::int64_t kLongTraining = 6;
inline const std::vector<std::string> kLongRows = {"rope + rp", "fire + rp"};
// [distance-plan]

/// Chapter 8's configuration of a two-layer row (length_config), with the row's options.
TrainConfig distance_config(const Row& row, const std::string& task, std::int64_t steps,
                            std::uint64_t seed);

/// The row's name in run folders: "kerple-form=power", "rope-rp2048".
std::string run_name(const Row& row);

/// One training of the experiment: the row it belongs to and the run.
struct DistanceRun {
  Row row;         ///< the row
  PlannedRun run;  ///< its configuration and folder `<out>/runs/<task>/<run_name>-s<seed>`
};

/// Every training, seed by seed, each seed task by task, each task the rows of kRows (as
/// chapter 8's plan orders them). The charlm runs read `corpus` and have `vocabulary` tokens.
std::vector<DistanceRun> plan_distance_runs(const std::string& out, std::uint64_t first_seed,
                                            std::int64_t seeds, std::int64_t steps,
                                            const std::string& corpus, std::int64_t vocabulary);

}  // namespace pe::ch09
