#include "chapters/08-length/lengths.hpp"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <regex>

#include "ag/files.hpp"
#include "lab/summary.hpp"

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

std::string write_length_table(const std::vector<FinishedRun>& runs,
                               const std::vector<std::int64_t>& lengths,
                               const std::string& out_dir) {
  std::string head = "| encoding | task | layers |", rule = "|---|---|---|";
  for (const std::int64_t L : lengths) {
    head.append(" ").append(std::to_string(L)).append(" |");
    rule += "---|";
  }
  std::string markdown = head + "\n" + rule + "\n";
  nlohmann::json rows = nlohmann::json::array();
  for (const FinishedRun& run : runs) {
    const TrainConfig& c = run.config;
    auto trainer = Trainer::resume(run.summary.out_dir + "/checkpoint.agt");
    const auto results = evaluate_past_training(*trainer, lengths, c.eval_sequences * c.length);
    markdown += "| " + c.encoding + " | " + c.task + " | " + std::to_string(c.model.layers) + " |";
    nlohmann::json cells = nlohmann::json::array();
    for (const LengthResult& r : results) {
      char cell[32];
      std::snprintf(cell, sizeof cell, "%.1f%%", 100.0 * r.accuracy);
      markdown.append(" ")
          .append(r.ran ? std::string(cell) : cannot_run_cell(r.error))
          .append(" |");
      if (r.ran)
        cells.push_back({{"length", r.length},
                         {"accuracy", r.accuracy},
                         {"loss", r.loss},
                         {"scored", r.scored}});
      else
        cells.push_back({{"length", r.length}, {"error", r.error}});
    }
    markdown += "\n";
    rows.push_back({{"encoding", c.encoding},
                    {"task", c.task},
                    {"layers", c.model.layers},
                    {"train_length", c.length},
                    {"run", run.summary.out_dir},
                    {"results", cells}});
  }
  const nlohmann::json table{{"experiment", "pe table --lengths"},
                             {"versions", build_versions()},
                             {"lengths", lengths},
                             {"rows", rows},
                             {"table", split_lines(markdown)}};
  ag::write_file_atomically(out_dir + "/lengths.md", markdown);
  ag::write_file_atomically(out_dir + "/lengths.json", table.dump(2) + "\n");
  return markdown;
}

}  // namespace pe
