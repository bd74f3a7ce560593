#include "ag/numbers.hpp"

#include <cerrno>
#include <cstdlib>

namespace ag {

bool parse_double(const std::string& text, double& value) {
  if (text.empty()) return false;
  // strtod would skip blanks and accept '+' and hexadecimal ("0x1p3"); from_chars does not.
  const char first = text[0];
  if (!(first == '-' || first == '.' || (first >= '0' && first <= '9') || first == 'i' ||
        first == 'I' || first == 'n' || first == 'N'))
    return false;
  if (text.find_first_of("xX") != std::string::npos) return false;
  errno = 0;
  char* end = nullptr;
  // strtod reads the "C" locale's decimal point: no program of the book calls setlocale.
  const double parsed = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || errno == ERANGE) return false;
  value = parsed;
  return true;
}

}  // namespace ag
