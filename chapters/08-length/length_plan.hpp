// Chapter 8's plan: the lengths, tasks and seeds of its experiment, the rows of its tables (an
// encoding, its depth and its number of heads) and the configuration every row trains with.
// In a library of its own, not in experiment.cpp, so that the tests can check what the
// experiment trains without training it.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "lab/run.hpp"
#include "lab/trainer.hpp"

namespace pe::ch08 {

// [length-plan]
constexpr std::int64_t kTrainLength = 32;
inline const std::vector<std::int64_t> kLengths = {32, 64, 128, 256, 512};
inline const std::vector<std::string> kTasks = {"shiftk", "copy", "charlm"};
constexpr std::int64_t kSeeds = 3;        // seeds of every row; the tables give mean and spread
constexpr std::int64_t kFastSteps = 200;  // --fast: one seed of 200 steps, lengths to 256
inline const std::vector<std::int64_t> kFastLengths = {32, 64, 128, 256};
constexpr std::int64_t kScoredCharacters = 2048;  // held-out characters at every length
constexpr std::int64_t kSyntheticTokens = 1024;   // held-out tokens at every length
// RoPE's context extension: the charlm RoPE model of seed 1 under each scaling rule, set for
// 8 times the training length, evaluated up to 256, without and after a fine-tune of
// kFineTuneSteps steps on sequences of 256.
inline const std::vector<std::string> kScalings = {"none",    "linear", "ntk",
                                                   "dynamic", "yarn",   "yarn-paper"};
inline const std::vector<std::int64_t> kScalingLengths = {32, 64, 128, 256};
constexpr double kScale = 8;
constexpr std::int64_t kFineTuneSteps = 20;

// The model of every row: width 64 cut into 8 heads of width 8 (ALiBi's paper uses 8 heads).
constexpr std::int64_t kWidth = 64;
constexpr std::int64_t kHeads = 8;

/// One row of the tables: an encoding, its depth and its heads.
struct Variant {
  std::string name;             ///< the row's name in the tables ("none (8 layers)")
  std::string encoding;         ///< a registered encoding
  std::int64_t layers;          ///< decoder blocks
  std::int64_t heads = kHeads;  ///< attention heads
};
inline const std::vector<Variant> kVariants = {{"none (1 layer)", "none", 1},
                                               {"none (8 layers)", "none", 8},
                                               {"sinusoidal", "sinusoidal", 2},
                                               {"learned", "learned", 2},
                                               {"shaw", "shaw", 2},
                                               {"xl", "xl", 2},
                                               {"t5", "t5", 2},
                                               {"rope", "rope", 2},
                                               {"alibi", "alibi", 2}};
// The same width cut into 2 heads of width 32: the same parameters and the same work in every
// linear layer, only the split differs. RoPE gets 16 rotation planes per head instead of 4,
// ALiBi the slopes of 2 heads (1/16 and 1/256); the sinusoid is the row RoPE is compared with.
inline const std::vector<Variant> kHeadWidthVariants = {{"sinusoidal, 2 heads", "sinusoidal", 2, 2},
                                                        {"rope, 2 heads", "rope", 2, 2},
                                                        {"alibi, 2 heads", "alibi", 2, 2}};

// A small model, so that the 108 trainings (12 rows, 3 tasks, 3 seeds) fit in about twenty
// minutes on two cores: width 64, heads as the row says, feed-forward 256.
TrainConfig length_config(const Variant& v, const std::string& task, std::int64_t steps,
                          std::uint64_t seed);
// [length-plan]

/// The row's name in run folders and in the experiment's lists of models: "rope-l2" for the
/// chapter's 8 heads, "rope-l2-h2" for another count.
std::string run_name(const Variant& v);

/// `<out>/runs/<task>/<run_name>-s<seed>`.
std::string run_folder(const std::string& out, const std::string& task, const Variant& v,
                       std::uint64_t seed);

/// One training of the experiment: the row it belongs to and the run.
struct LengthRun {
  Variant variant;  ///< the row
  PlannedRun run;   ///< its configuration and folder
};

/// Every training of the experiment, in one list, seed by seed (all of the first seed
/// before the second, so that an interrupted experiment leaves whole tables behind), each seed
/// task by task, each task the rows of kVariants and then those of kHeadWidthVariants. The
/// charlm runs read `corpus` and have `vocabulary` tokens (what the task would set, so that a
/// finished run's configuration matches).
std::vector<LengthRun> plan_length_runs(const std::string& out, std::uint64_t first_seed,
                                        std::int64_t seeds, std::int64_t steps,
                                        const std::string& corpus, std::int64_t vocabulary);

}  // namespace pe::ch08
