#include "programs/web/live_content.hpp"

#include <cctype>
#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "chapters/10-content-positions/content_positions.hpp"

namespace pe::live {

namespace {

constexpr auto f64 = ag::Dtype::f64;
constexpr std::int64_t kLongest = 32;  // tokens: a matrix the page can still label
constexpr double kSharpest = 50;       // sigmoid(50) is 1 to 2e-22: as open as a gate gets

bool printable(const std::string& text) {
  for (char c : text)
    if (c < 0x20 || c > 0x7e) return false;
  return true;
}

bool is_chosen(char c, const std::string& chosen) {
  const int lower = std::tolower(static_cast<unsigned char>(c));
  for (char k : chosen)
    if (std::tolower(static_cast<unsigned char>(k)) == lower) return true;
  return false;
}

double gate_value(const nlohmann::json& request, const char* key) {
  const double f = request.at(key).get<double>();
  ag::check(f > 0 && f < 1, "content_gates", key, " must lie strictly between 0 and 1, got ", f);
  return f;
}

}  // namespace

nlohmann::json content_gates(const nlohmann::json& request) {
  const std::string text = request.at("text").get<std::string>();
  const std::string chosen = request.at("chosen").get<std::string>();
  const auto T = static_cast<std::int64_t>(text.size());
  ag::check(T >= 1 && T <= kLongest, "content_gates", "the text has ", T, " characters; type 1 to ",
            kLongest);
  ag::check(printable(text) && printable(chosen), "content_gates",
            "the text and the chosen characters must be printable ASCII (one token each)");
  const double s = request.at("sharpness").get<double>();
  ag::check(s >= 0 && s <= kSharpest, "content_gates", "the sharpness ", s, " is outside 0 .. ",
            kSharpest);
  const double f_chosen = gate_value(request, "f_chosen"), f_other = gate_value(request, "f_other");
  ag::NoGradGuard no_grad;

  std::vector<bool> open(static_cast<std::size_t>(T));
  std::vector<std::string> tokens;
  for (std::int64_t t = 0; t < T; ++t) {
    open[t] = is_chosen(text[t], chosen);
    tokens.emplace_back(1, text[t]);
  }

  // CoPE: every query scores key j the same, +s on a chosen character and -s on another.
  std::vector<double> scores;
  for (std::int64_t i = 0; i < T; ++i)
    for (std::int64_t j = 0; j < T; ++j) scores.push_back(open[j] ? s : -s);
  const ag::Tensor gates = cope_gates(ag::from_vector(scores, {1, 1, T, T}, f64), 0);
  const ag::Tensor positions = cope_positions(gates);
  // The last query's row holds every key's gate (none of them lies after it).
  const std::vector<double> key_gates = ag::slice(gates, 2, T - 1, T).to_vector();
  const ag::Tensor count = CopeEncoding(T + 1, 1, f64).inspect(T).at(0).second;

  // The forgetting gate: log f of each token, its running sums, and D_ij = c_i - c_j.
  std::vector<double> log_f;
  for (std::int64_t t = 0; t < T; ++t) log_f.push_back(std::log(open[t] ? f_chosen : f_other));
  const ag::Tensor sums = forgetting_sums(ag::from_vector(log_f, {1, 1, T}, f64));
  const ag::Tensor bias = forgetting_bias(sums, sums);
  // The same gate with f_other at every token: b = logit(f_other), w . x = 0.
  const double b = std::log(f_other / (1 - f_other));
  const auto constant = ForgettingGateEncoding(1, 1, b, f64).inspect(T);

  return {
      {"length", T},
      {"tokens", tokens},
      {"chosen", open},
      {"cope",
       {{"gates", key_gates}, {"positions", positions.to_vector()}, {"count", count.to_vector()}}},
      {"fox", {{"log_f", log_f}, {"sums", sums.to_vector()}, {"bias", bias.to_vector()}}},
      {"alibi",
       {{"bias_init", b},
        {"slope", constant.at(0).second.to_vector().at(0)},
        {"bias", constant.at(1).second.to_vector()}}}};
}

}  // namespace pe::live
