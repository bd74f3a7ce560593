// Every number a program of the book reads from its command line is checked here, on the text
// the user wrote, before CLI11 converts it: CLI11 alone reads "-1" into an unsigned seed as
// 2^64 - 1, saturates "99999999999999999999" to the largest int64, and reads "" as 0. So every
// program refuses the same mistakes with the same words, quoting the value as it was written:
//   --seed: expected a whole number from 0 to 18446744073709551615, got '-1'
#pragma once
#include <CLI/CLI.hpp>
#include <charconv>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>

#include "ag/numbers.hpp"

namespace pe {

/// A whole number from `low` to `high`, as written: a sign on an unsigned option, a fraction,
/// an exponent ("1e5"), trailing text ("5x"), spaces, "" and anything out of range (no
/// wrap-around, no saturation) are refused. T is the option's type.
template <class T>
CLI::Validator whole_number(T low, T high = std::numeric_limits<T>::max()) {
  static_assert(std::is_integral_v<T>);
  const std::string range = "from " + std::to_string(low) + " to " + std::to_string(high);
  return CLI::Validator(
      [low, high, range](std::string& text) -> std::string {
        T value{};
        const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (error == std::errc() && end == text.data() + text.size() && value >= low &&
            value <= high)
          return "";
        return "expected a whole number " + range + ", got '" + text + "'";
      },
      "INT " + range);
}

/// A finite number from `low` to `high` (`low` itself refused when low_excluded: a learning
/// rate must be above 0); an infinite bound is no bound (real_number(-INFINITY): any finite
/// number, "expected a finite number, got 'nan'"). "inf", "nan", "1e999", "", " 1" and trailing
/// text are refused. ag::parse_double, not from_chars: libc++ before 17 has no from_chars for
/// double.
inline CLI::Validator real_number(double low, double high = INFINITY, bool low_excluded = false) {
  auto shown = [](double v) {
    std::string s = std::to_string(v);  // "0.000000": trim the zeros
    s.erase(s.find_last_not_of('0') + 1);
    if (!s.empty() && s.back() == '.') s.pop_back();
    return s;
  };
  // Only the bounds that exist: "-inf" is no bound a reader needs to be told about.
  std::string range;
  if (std::isfinite(low) && std::isfinite(high))
    range = " from " + shown(low) + (low_excluded ? " (excluded)" : "") + " to " + shown(high);
  else if (std::isfinite(low))
    range = std::string(low_excluded ? " above " : " of at least ") + shown(low);
  else if (std::isfinite(high))
    range = " of at most " + shown(high);
  return CLI::Validator(
      [low, high, low_excluded, range](std::string& text) -> std::string {
        double value = NAN;
        const bool whole = ag::parse_double(text, value);
        if (whole && std::isfinite(value) && (low_excluded ? value > low : value >= low) &&
            value <= high)
          return "";
        return "expected a finite number" + range + ", got '" + text + "'";
      },
      "NUMBER" + range);
}

/// A value that must not be empty: `--out ""` is a mistake, not "the default folder".
inline CLI::Validator not_empty(const std::string& what) {
  return CLI::Validator(
      [what](std::string& text) -> std::string {
        return text.empty() ? "expected " + what + ", got ''" : std::string();
      },
      "");
}

}  // namespace pe
