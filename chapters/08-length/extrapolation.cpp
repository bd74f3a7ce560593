#include "chapters/08-length/extrapolation.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include "ag/error.hpp"

namespace pe {

CharVocabulary::CharVocabulary(const std::string& training_text) : token_of_(256, -1) {
  std::array<bool, 256> present{};
  for (char c : training_text) present[static_cast<unsigned char>(c)] = true;
  for (std::size_t byte = 0; byte < present.size(); ++byte)
    if (present[byte]) token_of_[byte] = size_++;
}

std::vector<std::int64_t> CharVocabulary::encode(const std::string& text) const {
  std::vector<std::int64_t> tokens;
  tokens.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    ag::check(token_of_[byte] >= 0, "CharVocabulary", "byte ", int(byte), " at offset ", i,
              " does not occur in the training text, so the model has no token for it");
    tokens.push_back(token_of_[byte]);
  }
  return tokens;
}

LengthResult held_out_bits(Decoder& model, const std::vector<std::int64_t>& tokens,
                           std::int64_t length, std::int64_t characters,
                           std::int64_t random_positions) {
  ag::check(length >= 1 && characters >= length && characters % length == 0, "held_out_bits",
            "characters (", characters, ") must be a positive multiple of the length (", length,
            ")");
  ag::check(characters + 1 <= std::int64_t(tokens.size()), "held_out_bits", "the text has ",
            tokens.size(), " tokens; ", characters + 1, " are needed");
  // TASK 8.3 begin: bits per character over back-to-back windows
  ag::NoGradGuard no_grad;
  const std::int64_t windows = characters / length;
  const std::int64_t chunk = std::max<std::int64_t>(1, 4096 / length);  // bounded memory
  LengthResult result;
  result.length = length;
  double loss_sum = 0;
  ag::Rng position_rng(kEvaluationPositionsSeed);  // the same positions at every evaluation
  // [held-out-bits]
  try {
    for (std::int64_t first = 0; first < windows; first += chunk) {
      const std::int64_t rows = std::min(chunk, windows - first);
      ag::Indices inputs{{}, {rows, length}}, targets{{}, {rows, length}};
      const auto start = tokens.begin() + first * length;
      inputs.values.assign(start, start + rows * length);
      targets.values.assign(start + 1, start + rows * length + 1);
      const ag::Tensor logits =  // [rows, length, V]
          model.forward(inputs, evaluation_positions(length, random_positions, position_rng));
      const std::int64_t V = logits.size(-1);
      const std::vector<double> values = logits.to_vector();
      for (std::size_t i = 0; i < targets.values.size(); ++i) {
        const double* row = values.data() + i * V;
        result.accuracy += std::max_element(row, row + V) - row == targets.values[i] ? 1.0 : 0.0;
      }
      loss_sum += sequence_loss(logits, targets).item() * double(rows * length);
    }
  } catch (const ag::Error& error) {
    return refused_length(length, error);
  }
  // [held-out-bits]
  result.ran = true;
  result.scored = characters;
  result.accuracy /= double(characters);
  result.loss = loss_sum / double(characters);
  result.bits = result.loss / std::log(2.0);
  return result;
  // TASK 8.3 end
}

}  // namespace pe
