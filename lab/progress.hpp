// Progress of a long loop: a redrawn bar on a terminal, plain lines in a log file.
#pragma once
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>

namespace pe {

/// A progress bar on a terminal, plain lines in a log (stderr either way).
class Progress {
 public:
  /// \param label printed before the bar  \param total the count that means done
  Progress(std::string label, std::int64_t total)
      : label_(std::move(label)),
        total_(total),
        tty_(isatty(fileno(stderr))),
        start_(std::chrono::steady_clock::now()) {}

  /// Redraws the bar (terminal only, at most ten times a second).
  void update(std::int64_t done, const std::string& status) {
    if (!tty_) return;
    const auto now = std::chrono::steady_clock::now();
    if (done < total_ && now - last_draw_ < std::chrono::milliseconds(100)) return;
    last_draw_ = now;
    const int width = 30;
    const int filled = total_ > 0 ? int(width * done / total_) : width;
    std::fprintf(stderr, "\r%s [%s%s] %ld/%ld %s %.0fs\033[K", label_.c_str(),
                 std::string(filled, '#').c_str(), std::string(width - filled, '.').c_str(),
                 long(done), long(total_), status.c_str(), seconds());
    std::fflush(stderr);
  }
  /// A line that stays: on a terminal it replaces the bar, in a log it is simply printed.
  void line(const std::string& text) {
    if (tty_) std::fprintf(stderr, "\r\033[K");
    std::fprintf(stderr, "%s %s\n", label_.c_str(), text.c_str());
    std::fflush(stderr);
  }
  /// Clears the bar (terminal only) so that the next output starts on a clean line.
  void finish() {
    if (tty_) std::fprintf(stderr, "\r\033[K");
  }
  /// Seconds since construction.
  double seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  std::string label_;
  std::int64_t total_;
  bool tty_;
  std::chrono::steady_clock::time_point start_, last_draw_{};
};

}  // namespace pe
