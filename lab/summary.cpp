#include "lab/summary.hpp"

#include <unistd.h>

#include <cstdio>
#include <iostream>

#include "ag/error.hpp"

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
        if (w <= 0) break;
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

nlohmann::json& experiment_summary() {
  static nlohmann::json summary = nlohmann::json::object();
  return summary;
}

void record_summary_value(const std::string& name, double value) {
  experiment_summary()["values"][name] = value;
}

void record_summary_run(const std::string& name, const FinishedRun& run, const Trainer* trainer,
                        const AttentionAverages* attention) {
  const TrainConfig& c = run.config;
  const Evaluation& e = run.summary.final.at(c.length);
  nlohmann::json entry = {{"encoding", c.encoding},    {"task", c.task},
                          {"layers", c.model.layers},  {"heads", c.model.heads},
                          {"steps", c.steps},          {"seed", c.seed},
                          {"accuracy", e.accuracy},    {"loss", e.loss},
                          {"scored_tokens", e.scored}, {"train_seconds", run.summary.train_seconds},
                          {"reused", run.reused},      {"line", result_line(run)}};
  if (trainer) {
    nlohmann::json history = nlohmann::json::array();  // [step, held-out accuracy]
    for (const HistoryPoint& h : trainer->history()) history.push_back({h.step, h.eval_accuracy});
    entry["history"] = history;
  }
  if (attention) {
    entry["by_offset"] = attention->by_offset;  // [layer][head][r]
    entry["by_key"] = attention->by_key;        // [layer][head][j]
  }
  experiment_summary()["runs"][name] = entry;
}

nlohmann::json split_lines(const std::string& text) {
  nlohmann::json lines = nlohmann::json::array();
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
