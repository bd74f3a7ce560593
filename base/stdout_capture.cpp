#include "base/stdout_capture.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <iostream>

#include "ag/error.hpp"
#include "base/program_frame.hpp"

namespace pe {

StdoutCapture::StdoutCapture() {
  std::cout.flush();
  std::fflush(stdout);
  int fds[2];
  ag::check(::pipe(fds) == 0, "StdoutCapture", "cannot create a pipe for stdout");
  saved_ = ::dup(STDOUT_FILENO);
  ag::check(saved_ >= 0 && ::dup2(fds[1], STDOUT_FILENO) >= 0, "StdoutCapture",
            "cannot redirect stdout");
  ::close(fds[1]);  // fd 1 is now the pipe's only write end: restoring it ends the reader
  read_end_ = fds[0];
  std::setvbuf(stdout, nullptr, _IOLBF, BUFSIZ);
  reader_ = std::thread([this] {
    char buffer[4096];
    ssize_t n;
    while ((n = ::read(read_end_, buffer, sizeof buffer)) > 0) {
      text_.append(buffer, std::size_t(n));
      for (ssize_t done = 0; done < n;) {  // pass it on to the real stdout
        const ssize_t w = ::write(saved_, buffer + done, std::size_t(n - done));
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {  // a full disk: the program's frame says so at its end (program_frame)
          if (hidden_stdout_error() == 0) hidden_stdout_error() = w < 0 ? errno : EIO;
          break;
        }
        done += w;
      }
    }
  });
}

std::string StdoutCapture::finish() {
  if (finished_) return text_;
  finished_ = true;
  std::cout.flush();
  std::fflush(stdout);
  ::dup2(saved_, STDOUT_FILENO);  // closes the pipe's write end: the reader sees its end
  reader_.join();
  ::close(read_end_);
  ::close(saved_);
  return text_;
}

StdoutCapture::~StdoutCapture() { finish(); }

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t begin = 0;
  while (begin < text.size()) {
    std::size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    lines.push_back(text.substr(begin, end - begin));
    begin = end + 1;
  }
  return lines;
}

}  // namespace pe
