// Reading a number from text the same way on every standard library. std::from_chars for
// double is missing from libc++ before release 17 (the one Apple's clang and Debian's clang 16
// ship), so the framework and its programs read floating-point text through this one function.
#pragma once
#include <string>

namespace ag {

/// The whole of `text` as a double, written as from_chars would accept it: an optional '-',
/// digits with an optional '.', an optional exponent (also "inf" and "nan"). Leading blanks,
/// a '+', hexadecimal and trailing characters are refused, as is a value out of double's
/// range. Returns false and leaves `value` alone when the text is not such a number.
bool parse_double(const std::string& text, double& value);

}  // namespace ag
