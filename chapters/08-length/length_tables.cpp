#include "chapters/08-length/length_tables.hpp"

#include <cmath>
#include <cstdio>

#include "lab/figures.hpp"

namespace pe {

nlohmann::json length_result_json(const LengthResult& r) {
  if (!r.ran) return {{"length", r.length}, {"error", r.error}};
  return {{"length", r.length},
          {"accuracy", r.accuracy},
          {"loss", r.loss},
          {"bits", r.bits},
          {"scored", r.scored}};
}

std::string fixed_digits(double value, int digits) {
  char text[32];
  std::snprintf(text, sizeof text, "%.*f", digits, value);
  return text;
}

std::pair<double, double> mean_and_sd(const std::vector<double>& values) {
  double mean = 0;
  for (double v : values) mean += v;
  mean /= double(values.size());
  double ss = 0;
  for (double v : values) ss += (v - mean) * (v - mean);
  return {mean, values.size() > 1 ? std::sqrt(ss / double(values.size() - 1)) : 0.0};
}

std::string length_table_header(const std::vector<std::string>& first,
                                const std::vector<std::int64_t>& lengths,
                                std::int64_t train_length) {
  std::string head = "|", rule = "|";
  for (const std::string& column : first) {
    head.append(" ").append(column).append(" |");
    rule += "---|";
  }
  for (auto L : lengths) {
    head.append(" ").append(std::to_string(L)).append(L == train_length ? " (train) |" : " |");
    rule += "---|";
  }
  return head + "\n" + rule + "\n";
}

RowOverSeeds row_over_seeds(const std::vector<std::vector<LengthResult>>& seeds,
                            const std::vector<std::int64_t>& lengths, bool text) {
  RowOverSeeds row;
  for (std::size_t i = 0; i < lengths.size(); ++i) {
    std::vector<double> values;
    LengthResult mean;
    mean.length = lengths[i];
    for (const auto& seed_results : seeds) {
      const LengthResult& one = seed_results.at(i);
      if (!one.ran) mean.error = one.error;
      values.push_back(text ? one.bits : one.accuracy);
    }
    if (!mean.error.empty()) {
      row.cells.append(" ").append(cannot_run_cell(mean.error)).append(" |");
    } else {
      const auto [m, sd] = mean_and_sd(values);
      mean.ran = true;
      (text ? mean.bits : mean.accuracy) = m;
      row.summary[std::to_string(lengths[i])] = {
          {text ? "bits" : "accuracy", m}, {"sd", sd}, {"seeds", values.size()}};
      row.cells.append(" ").append(fixed_digits(m, 3));
      if (values.size() > 1) row.cells.append(" ± ").append(fixed_digits(sd, 3));
      row.cells.append(" |");
    }
    row.means.push_back(mean);
  }
  return row;
}

std::pair<double, double> length_figure_y_range(bool text, const MeanRows& rows) {
  if (!text) return {0.0, 1.0};
  double worst = 4;
  for (const auto& [name, row] : rows)
    for (const auto& r : row)
      if (r.ran && std::isfinite(r.bits)) worst = std::max(worst, r.bits);
  return {1.5, std::ceil(worst + 0.5)};
}

void plot_against_length(const std::string& png, const std::string& title,
                         const std::string& y_label, const MeanRows& rows,
                         std::pair<double, double> y_range, std::int64_t train_length) {
  std::vector<Series> series;
  for (const auto& [name, results] : rows) {
    Series s{name, {}, {}};
    for (const auto& r : results) {
      s.x.push_back(std::log2(double(r.length)));
      s.y.push_back(r.ran ? (y_label == "accuracy" ? r.accuracy : r.bits) : std::nan(""));
    }
    series.push_back(s);
  }
  const double t = std::log2(double(train_length));
  series.push_back(
      {"training length " + std::to_string(train_length), {t, t}, {y_range.first, y_range.second}});
  write_line_plot(png, series, title, "log2 of the evaluation length (5 = 32, 9 = 512)", y_label,
                  false, y_range);
}

}  // namespace pe
