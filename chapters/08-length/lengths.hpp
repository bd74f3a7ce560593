// A trained model at lengths it never saw: held-out results at each length, and the record of
// a length at which the model cannot run at all (a learned table past its last row). Chapter 8
// builds its experiment on this; `pe table --lengths` uses it for the book's reference runs.
// (Task 8.4.)
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "ag/error.hpp"
#include "lab/run.hpp"
#include "lab/trainer.hpp"

namespace pe {

/// One model at one evaluation length.
struct LengthResult {
  std::int64_t length = 0;  ///< the evaluation length (tokens per sequence)
  bool ran = false;         ///< false: the model refused the length, `error` says why
  double accuracy = 0;      ///< fraction of scored tokens predicted right (argmax)
  double loss = 0;          ///< mean cross-entropy over the scored tokens, in nats
  double bits = 0;          ///< the same in bits (loss / ln 2): bits per character for text
  std::int64_t scored = 0;  ///< how many tokens were scored at this length
  std::string error;        ///< the model's own one-line error when ran is false
};

/// Trainer::evaluate at each length on the task's held-out sequences: tokens / length of them
/// (at least 2), so that every length costs about the same number of tokens. An ag::Error at
/// one length (an encoding that has no position for it) is recorded in that length's result
/// and the other lengths still run; any other failure propagates.
std::vector<LengthResult> evaluate_past_training(Trainer& trainer,
                                                 const std::vector<std::int64_t>& lengths,
                                                 std::int64_t tokens);

/// The result of a length the model refused: ran is false and error holds its message.
LengthResult refused_length(std::int64_t length, const ag::Error& error);

/// What a table shows for a length the model could not run: "cannot run: table has N rows"
/// when the error is the learned table's (N read from the error's own text), otherwise
/// "cannot run: " and the error.
std::string cannot_run_cell(const std::string& error);

/// The extrapolation table of finished runs, for `pe table --lengths` (the lab's table calls
/// it through TableOptions::length_table): each run's model, loaded from its checkpoint,
/// evaluated at each length on about eval_sequences x its training length held-out tokens
/// (evaluate_past_training), one row per run and one column per length, "cannot run: ..."
/// where the model refuses a length. Writes out_dir/lengths.md and out_dir/lengths.json (the
/// rows, and the markdown lines under "table" for the text to quote) and returns the markdown.
std::string write_length_table(const std::vector<FinishedRun>& runs,
                               const std::vector<std::int64_t>& lengths,
                               const std::string& out_dir);

}  // namespace pe
