// The tables and figures of an experiment that trains at one length and evaluates at many:
// chapter 8's, and chapter 9's on the same bench. A row is one model configuration trained
// with several seeds; a cell is its mean ± standard deviation at one evaluation length.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "chapters/08-length/lengths.hpp"

namespace pe {

/// A result as the summaries record it: the length and the numbers, or the refusal.
nlohmann::json length_result_json(const LengthResult& result);

/// value with `digits` digits after the point ("0.913").
std::string fixed_digits(double value, int digits);

/// Mean and sample standard deviation (0 for a single value).
std::pair<double, double> mean_and_sd(const std::vector<double>& values);

/// The two first lines of a markdown table: the `first` columns, then one column per length,
/// the training length marked "(train)".
std::string length_table_header(const std::vector<std::string>& first,
                                const std::vector<std::int64_t>& lengths,
                                std::int64_t train_length);

/// One row of a table over its seeds: what row_over_seeds returns.
struct RowOverSeeds {
  std::string cells;                ///< " m ± sd | ..." (or why a length cannot run)
  std::vector<LengthResult> means;  ///< the mean at every length, for the figure
  /// {"64": {"bits" or "accuracy": m, "sd": sd, "seeds": n}, ...}, the lengths that ran
  nlohmann::json summary = nlohmann::json::object();
};
/// The row of `seeds` over its seeds: `seeds[s][i]` is seed s at lengths[i]; `text` scores
/// bits per character, otherwise accuracy.
RowOverSeeds row_over_seeds(const std::vector<std::vector<LengthResult>>& seeds,
                            const std::vector<std::int64_t>& lengths, bool text);

/// The rows of a figure: a name and its mean at every length.
using MeanRows = std::vector<std::pair<std::string, std::vector<LengthResult>>>;

/// The y axis of a figure: accuracy from 0 to 1; bits from 1.5 up to the worst mean, so
/// that no line leaves the figure.
std::pair<double, double> length_figure_y_range(bool text, const MeanRows& rows);

/// One line per row against log2 of the length, and the training length as a vertical line.
void plot_against_length(const std::string& png, const std::string& title,
                         const std::string& y_label, const MeanRows& rows,
                         std::pair<double, double> y_range, std::int64_t train_length);

}  // namespace pe
