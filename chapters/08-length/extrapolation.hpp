// Evaluating a trained model at lengths it never saw: held-out accuracy on the synthetic
// tasks, bits per character on held-out English text, and the record of a length at which
// the model cannot run at all (the learned table past its last row).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "decoder.hpp"
#include "trainer.hpp"

namespace pe {

/// One model at one evaluation length.
struct LengthResult {
  std::int64_t length = 0;  ///< the evaluation length (tokens per sequence)
  bool ran = false;     ///< false: the model refused the length, `error` says why
  double accuracy = 0;  ///< fraction of scored tokens predicted right (argmax)
  double loss = 0;      ///< mean cross-entropy over the scored tokens, in nats
  double bits = 0;      ///< the same in bits (loss / ln 2): bits per character for text
  std::int64_t scored = 0;  ///< how many tokens were scored at this length
  std::string error;  ///< the model's own one-line error when ran is false
};

/// Trainer::evaluate at each length on the task's held-out sequences: tokens / length of them
/// (at least 2), so that every length costs about the same number of tokens. An ag::Error at
/// one length (an encoding that has no position for it) is recorded in that length's result
/// and the other lengths still run; any other failure propagates.
std::vector<LengthResult> evaluate_past_training(Trainer& trainer,
                                                 const std::vector<std::int64_t>& lengths,
                                                 std::int64_t tokens);

/// The characters of a text as tokens, numbered as the charlm task numbers them: token t is
/// the t-th smallest byte that occurs in the training text. A held-out text must use no byte
/// the training text lacks (the model has no token for it).
class CharVocabulary {
 public:
  /// Numbers the distinct bytes of `training_text` in increasing order.
  explicit CharVocabulary(const std::string& training_text);
  /// The tokens of `text`; an ag::Error names the first byte the vocabulary lacks.
  std::vector<std::int64_t> encode(const std::string& text) const;
  /// How many distinct bytes (tokens) the training text has.
  std::int64_t size() const { return size_; }

 private:
  std::vector<std::int64_t> token_of_;  // byte -> token, -1 for bytes not in the vocabulary
  std::int64_t size_ = 0;
};

/// The model's next-character loss on the first `characters` predictions of a token stream,
/// cut into back-to-back windows of `length` tokens (window w reads tokens w*length ..
/// w*length + length - 1 and predicts each one's successor). Every length scores the same
/// characters, so the lengths differ only in how much context each prediction has and how
/// far its positions lie past training. characters must be a multiple of length, and the
/// stream must hold characters + 1 tokens. An ag::Error from the model is recorded as in
/// evaluate_past_training.
LengthResult held_out_bits(Decoder& model, const std::vector<std::int64_t>& tokens,
                           std::int64_t length, std::int64_t characters);

/// What the extrapolation table shows for a length the model could not run: "cannot run:
/// table has N rows" when the error is the learned table's (N read from the error's own
/// text), otherwise "cannot run: " and the error.
std::string cannot_run_cell(const std::string& error);

}  // namespace pe
