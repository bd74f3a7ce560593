#include "chapters/08-length/length_probe.hpp"

#include <cmath>

#include "ag/error.hpp"
#include "chapters/07-nope/position_probe.hpp"

namespace pe {

namespace {

constexpr std::int64_t kFitWindows = 32, kTestWindows = 16;
constexpr double kRidge = 1e-3;  // chapter 7's

ag::Indices windows(const std::vector<std::int64_t>& tokens, std::int64_t first, std::int64_t count,
                    std::int64_t length) {
  ag::Indices ids{{}, {count, length}};
  const auto start = tokens.begin() + first * length;
  ids.values.assign(start, start + count * length);
  return ids;
}

}  // namespace

std::vector<std::vector<ProbeScore>> probe_position_bands(Decoder& model,
                                                          const std::vector<std::int64_t>& tokens,
                                                          std::int64_t length, std::int64_t band) {
  ag::check(band >= 2 && length % band == 0, "probe_position_bands", "length ", length,
            " must be a multiple of the band ", band, " (at least 2)");
  ag::check((kFitWindows + kTestWindows) * length <= std::int64_t(tokens.size()),
            "probe_position_bands", "needs ", (kFitWindows + kTestWindows) * length,
            " tokens, got ", tokens.size());
  const auto fit_states = layer_states(model, windows(tokens, 0, kFitWindows, length));
  const auto test_states = layer_states(model, windows(tokens, kFitWindows, kTestWindows, length));
  std::vector<std::vector<ProbeScore>> scores;
  for (std::size_t layer = 0; layer < fit_states.size(); ++layer) {
    const LinearProbe probe = fit_linear_probe(position_data(fit_states[layer]), kRidge);
    const ProbeData test = position_data(test_states[layer]);
    const std::vector<double> predicted = predict(probe, test);
    std::vector<ProbeScore> per_band;
    for (std::int64_t first = 0; first < length; first += band) {
      // Rows are b * length + t with target t: the band's rows in every window.
      double mean = first + (band - 1) / 2.0, residual = 0, spread = 0, absolute = 0;
      for (std::int64_t b = 0; b < kTestWindows; ++b)
        for (std::int64_t t = first; t < first + band; ++t) {
          const double error = predicted[b * length + t] - double(t);
          residual += error * error;
          spread += (t - mean) * (t - mean);
          absolute += std::abs(error);
        }
      per_band.push_back({1.0 - residual / spread, absolute / double(kTestWindows * band)});
    }
    scores.push_back(per_band);
  }
  return scores;
}

}  // namespace pe
