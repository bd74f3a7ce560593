// Errors: one exception type whose text says what was expected and what came.
#pragma once
#include <sstream>
#include <stdexcept>
#include <string>

namespace ag {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace detail {
template <class... Parts>
std::string concat(const Parts&... parts) {
  std::ostringstream out;
  (out << ... << parts);
  return out.str();
}
}  // namespace detail

/// Throws ag::Error("op: <message parts>") unless condition holds.
template <class... Parts>
void check(bool condition, const char* op, const Parts&... parts) {
  if (!condition) throw Error(detail::concat(op, ": ", parts...));
}

}  // namespace ag
