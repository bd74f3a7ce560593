// Chapter 11's plan: the rows of its tables on chapter 8's bench (the same model, training
// length, evaluation lengths, tasks and seeds), the rope types that stretch a trained RoPE
// model from 32 to 512, and where each run lives. In a library of its own, so that the tests
// check what the experiment trains without training it.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "chapters/08-length/length_plan.hpp"
#include "lab/run.hpp"
#include "lab/trainer.hpp"

namespace pe::ch11 {

// [todays-plan]
/// One row of the tables: an encoding with its options, in chapter 8's model (2 layers, 8
/// heads of width 8: 4 rotation planes per head).
struct Row {
  std::string name;                                 ///< the row's name in the tables
  std::string encoding;                             ///< a registered encoding
  std::map<std::string, std::string> options = {};  ///< its options (`pe train -o`)
  std::string chapter = "11";                       ///< the chapter that adds it
};
// Gemma's and Llama 4's numbers scaled to a training length of 32: a window and a chunk of a
// quarter of it (Gemma 3's window is 1,024 tokens, Llama 4's chunk 8,192), and the temperature's
// floor scale F = 8 where Llama 4 has 8,192, so that it acts inside training as well as past it.
constexpr std::int64_t kWindow = 8;
constexpr std::int64_t kChunk = 8;
constexpr std::int64_t kTemperatureFloor = 8;
inline const std::vector<Row> kRows = {
    {"none", "none", {}, "7"},
    {"rope", "rope", {}, "5"},
    {"rope, half turned", "rope", {{"fraction", "0.5"}}, "5"},
    {"p-rope 0.25", "rope", {{"rope_type", "proportional"}, {"partial_rotary_factor", "0.25"}}},
    {"p-rope 0.5", "rope", {{"rope_type", "proportional"}, {"partial_rotary_factor", "0.5"}}},
    {"p-rope 0.75", "rope", {{"rope_type", "proportional"}, {"partial_rotary_factor", "0.75"}}},
    {"local + global",
     "hybrid",
     {{"pattern", "local+global"},
      {"window", std::to_string(kWindow)},
      {"local_base", "10000"},
      {"global_base", "1000000"}}},
    {"chunked + nope", "hybrid", {{"pattern", "chunked+nope"}, {"chunk", std::to_string(kChunk)}}},
    {"chunked + nope, temperature",
     "hybrid",
     {{"pattern", "chunked+nope"},
      {"chunk", std::to_string(kChunk)},
      {"temperature_floor", std::to_string(kTemperatureFloor)}}},
    {"rope, temperature",
     "hybrid",
     {{"pattern", "global"},
      {"temperature_floor", std::to_string(kTemperatureFloor)},
      {"temperature_on", "all"}}},
    {"pope", "pope", {}},
};
// Stretching a trained RoPE model (the charlm rows "rope", every seed) from 32 to 512 without
// training it further: chapter 8's rules and Hugging Face's llama3 and longrope, for s = 16.
constexpr double kStretch = 16;
inline const std::vector<std::string> kStretchRules = {"none", "linear", "ntk",     "dynamic",
                                                       "yarn", "llama3", "longrope"};
// Llama 3.1's band edges as its config gives them: planes that turn more than 4 times over the
// original context are kept, planes that turn less than once are divided by s.
constexpr double kLowFreqFactor = 1;
constexpr double kHighFreqFactor = 4;
// LongRoPE's factors are searched, not derived: each of the 4 planes' rescale factor is one of
// these, non-decreasing from the fastest plane to the slowest, chosen by the bits on text
// taken from the training corpus at length 512 (never the held-out text).
inline const std::vector<double> kLongropeCandidates = {1, 2, 4, 8, 16, 32};
constexpr std::int64_t kSearchCharacters = 2048;
// [todays-plan]

/// Chapter 8's configuration of a two-layer row (length_config), with the row's options.
TrainConfig todays_config(const Row& row, const std::string& task, std::int64_t steps,
                          std::uint64_t seed);

/// The row's name in run folders: "rope", "rope-fraction=0.5", "hybrid-pattern=local+global-...".
std::string run_name(const Row& row);

/// One training of the experiment: the row it belongs to and the run.
struct TodaysRun {
  Row row;         ///< the row
  PlannedRun run;  ///< its configuration and folder `<out>/runs/<task>/<run_name>-s<seed>`
};

/// Every training, seed by seed, each seed task by task (chapter 8's three), each task the
/// rows of kRows. The charlm runs read `corpus` and have `vocabulary` tokens.
std::vector<TodaysRun> plan_todays_runs(const std::string& out, std::uint64_t first_seed,
                                        std::int64_t seeds, std::int64_t steps,
                                        const std::string& corpus, std::int64_t vocabulary);

/// The encoding options that stretch "rope" by `scale` from `train_length` under `rule`
/// (kStretchRules): chapter 8's options for its rules, Hugging Face's names for llama3 and
/// longrope (whose long factors are `long_factor`, one per plane; its short ones are 1).
std::map<std::string, std::string> stretch_options(const std::string& rule, double scale,
                                                   std::int64_t train_length,
                                                   const std::vector<double>& long_factor = {});

/// Every non-decreasing choice of `planes` factors from `candidates` (sorted), in
/// lexicographic order: LongRoPE's search space in miniature.
std::vector<std::vector<double>> longrope_search_space(const std::vector<double>& candidates,
                                                       std::int64_t planes);

}  // namespace pe::ch11
