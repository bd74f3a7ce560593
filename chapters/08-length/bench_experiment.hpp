// The frame of an experiment on chapter 8's bench (the experiments of chapters 8 to 11): its
// command line, with the --fast look that every one of them offers, and the setup its summary
// records. Header only: it runs through lab/chapter_options.hpp, which each chapter's program
// links with its own chapters (pe_link_lab).
#pragma once
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "chapters/08-length/extrapolation.hpp"
#include "chapters/08-length/length_plan.hpp"
#include "chapters/08-length/lengths.hpp"
#include "lab/chapter_options.hpp"
#include "lab/trainer.hpp"

namespace pe {

/// Runs `run` as chapter `number`'s experiment ("09": the program ch09_experiment, 500 steps,
/// output in results/ch09), with `--fast`: one seed of ch08::kFastSteps steps at
/// ch08::kFastLengths, in results/ch09-fast. `about` is its --help text.
inline int run_bench_experiment(int argc, char** argv, const std::string& number,
                                const std::string& about,
                                const std::function<void(const ChapterOptions&)>& run) {
  const std::string out = "results/ch" + number;
  return run_chapter_experiment(
      argc, argv, "ch" + number + "_experiment", about,
      {.steps = 500,
       .out = out,
       .fast_help =
           "a quick look in " + out + "-fast: one seed, " + std::to_string(ch08::kFastSteps) +
           " steps, lengths " + std::to_string(ch08::kFastLengths.front()) + " to " +
           std::to_string(ch08::kFastLengths.back()) + " (the chapter quotes the full run)",
       .fast_out = out + "-fast"},
      [run](ChapterOptions options) {
        if (options.fast) options.steps = ch08::kFastSteps;
        run(options);
      });
}

/// The bench's setup in a summary: the training length, the evaluation lengths, the seeds,
/// whether --fast ran, and the model and training every row shares (`shape`: any row's
/// configuration).
inline void record_bench_setup(nlohmann::json& summary, const TrainConfig& shape,
                               const std::vector<std::int64_t>& lengths, std::int64_t seeds,
                               bool fast) {
  summary["train_length"] = ch08::kTrainLength;
  summary["lengths"] = lengths;
  summary["seeds"] = seeds;
  summary["fast"] = fast;
  summary["model"] = {{"width", shape.model.width},   {"heads", shape.model.heads},
                      {"layers", shape.model.layers}, {"ffn_width", shape.model.ffn_width},
                      {"batch", shape.batch},         {"lr", shape.lr},
                      {"steps", shape.steps}};
}

/// A trained model at every length of the bench: on the character model (charlm), bits per
/// character over ch08::kScoredCharacters of `held_out` (evaluated at randomized positions up to
/// `random_positions`, 0 for 0 .. T-1: held_out_bits); on a synthetic task, held-out accuracy
/// over ch08::kSyntheticTokens tokens (evaluate_past_training).
inline std::vector<LengthResult> evaluate_on_bench(Trainer& trainer,
                                                   const std::vector<std::int64_t>& lengths,
                                                   const std::vector<std::int64_t>& held_out,
                                                   std::int64_t random_positions = 0) {
  if (trainer.config().task != "charlm")
    return evaluate_past_training(trainer, lengths, ch08::kSyntheticTokens);
  std::vector<LengthResult> at_lengths;
  for (std::int64_t L : lengths)
    at_lengths.push_back(
        held_out_bits(trainer.model(), held_out, L, ch08::kScoredCharacters, random_positions));
  return at_lengths;
}

}  // namespace pe
