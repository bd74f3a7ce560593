// Bits per character on held-out English text at lengths the model never saw. The synthetic
// tasks' evaluation at any length (evaluate_past_training, LengthResult, cannot_run_cell) is
// the bench's, in chapters/08-length/lengths.hpp, because `pe table --lengths` uses it too.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "chapters/01-attention/decoder.hpp"
#include "chapters/08-length/lengths.hpp"
#include "lab/trainer.hpp"

namespace pe {

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
/// evaluate_past_training. A model trained at randomized positions with L_max =
/// random_positions is evaluated as it was trained (evaluation_positions: sorted random
/// positions from 0 .. L_max-1, one set per forward call, from a fixed seed; a length above
/// L_max is recorded as refused); 0 means positions 0 .. length-1.
LengthResult held_out_bits(Decoder& model, const std::vector<std::int64_t>& tokens,
                           std::int64_t length, std::int64_t characters,
                           std::int64_t random_positions = 0);

}  // namespace pe
