#include "lengths.hpp"

#include <algorithm>
#include <cmath>
#include <regex>

namespace pe {

LengthResult refused_length(std::int64_t length, const ag::Error& error) {
  LengthResult result;
  result.length = length;
  result.error = error.what();
  return result;
}

// [past-training]
std::vector<LengthResult> evaluate_past_training(Trainer& trainer,
                                                 const std::vector<std::int64_t>& lengths,
                                                 std::int64_t tokens) {
  // TASK 8.4 begin: evaluate at every length, recording a refusal
  std::vector<LengthResult> results;
  for (const std::int64_t length : lengths) {
    try {
      const Evaluation e = trainer.evaluate(length, std::max<std::int64_t>(2, tokens / length));
      results.push_back({length, true, e.accuracy, e.loss, e.loss / std::log(2.0), e.scored, {}});
    } catch (const ag::Error& error) {
      results.push_back(refused_length(length, error));
    }
  }
  return results;
  // TASK 8.4 end
}
// [past-training]

std::string cannot_run_cell(const std::string& error) {
  // The learned table's error (chapter 3) ends "... but the table has max_len N".
  static const std::regex table_rows("the table has max_len ([0-9]+)");
  std::smatch match;
  if (std::regex_search(error, match, table_rows))
    return "cannot run: table has " + match[1].str() + " rows";
  return "cannot run: " + error;
}

}  // namespace pe
