// Everything a program prints, kept for its summary while it still reaches the terminal.
#pragma once
#include <string>
#include <thread>
#include <vector>

namespace pe {

/// Copies everything written to the process's stdout (file descriptor 1) into a string while
/// still passing it through to the terminal, from construction until finish(). stdout is
/// line-buffered meanwhile, so the output appears as it is printed.
class StdoutCapture {
 public:
  StdoutCapture();
  ~StdoutCapture();
  StdoutCapture(const StdoutCapture&) = delete;
  StdoutCapture& operator=(const StdoutCapture&) = delete;

  /// Restores stdout and returns what was printed. Called at most once; the destructor calls
  /// it if nobody did.
  std::string finish();

 private:
  int saved_ = -1, read_end_ = -1;
  std::thread reader_;
  std::string text_;
  bool finished_ = false;
};

/// Splits text into lines (without the newlines; a last line without one counts too).
std::vector<std::string> split_lines(const std::string& text);

}  // namespace pe
