#include "run.hpp"

#include <signal.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <nlohmann/json.hpp>

#include "ag/files.hpp"
#include "ag/io.hpp"
#include "ag/profile.hpp"
#include "ag/simd.hpp"
#include "ag/threads.hpp"
#include "ag/versions.hpp"
#include "figures.hpp"
#include "memory.hpp"
#include "progress.hpp"

#ifndef PE_GIT_COMMIT
#define PE_GIT_COMMIT "unknown"
#endif
#ifndef PE_BUILD_TYPE
#define PE_BUILD_TYPE "unknown"
#endif
#ifndef PE_ARCH_NAME
#define PE_ARCH_NAME "unknown"
#endif
#ifndef PE_COMPILER
#define PE_COMPILER "unknown"
#endif

namespace pe {

std::map<std::string, std::string> build_versions() {
  return {{"git_commit", PE_GIT_COMMIT},
          {"compiler", PE_COMPILER},
          {"libraries", ag::library_versions()},
          {"threads", ag::has_threads() ? "OpenMP" : "none (built without OpenMP)"},
          {"build_type", PE_BUILD_TYPE},
          {"arch", PE_ARCH_NAME},               // what the build was compiled for
          {"simd", ag::simd_path_name()}};  // the kernels this machine ran: same path, same bits
}

std::map<std::int64_t, Evaluation> evaluate_lengths(Trainer& trainer,
                                                    const std::vector<std::int64_t>& lengths,
                                                    std::int64_t sequences) {
  std::map<std::int64_t, Evaluation> results;
  for (auto length : lengths) results[length] = trainer.evaluate(length, sequences);
  return results;
}

namespace {

// The attention weights of every layer, [B, H, T, T] each, for one forward pass over ids.
std::vector<ag::Tensor> captured_attention(Decoder& model, const ag::Indices& ids) {
  model.capture_attention(true);
  {
    ag::NoGradGuard no_grad;
    model.forward(ids);
  }
  model.capture_attention(false);
  return model.attention_weights();
}

}  // namespace

std::vector<ag::Tensor> held_out_attention(Trainer& trainer, std::int64_t length) {
  const Batch sample = trainer.task().held_out(1, length, trainer.config().seed);
  return captured_attention(trainer.model(), sample.inputs);
}

void write_attention_figure(Trainer& trainer, std::int64_t length, const std::string& png_path) {
  const auto weights = held_out_attention(trainer, length);  // per layer [1, H, T, T]
  std::vector<Heatmap> panels;
  for (std::size_t layer = 0; layer < weights.size(); ++layer)
    for (std::int64_t h = 0; h < weights[layer].size(1); ++h) {
      Heatmap panel = heatmap_from(ag::slice(ag::slice(weights[layer], 1, h, h + 1), 0, 0, 1));
      panel.title = "layer " + std::to_string(layer + 1) + ", head " + std::to_string(h + 1);
      panel.range = std::make_pair(0.0, 1.0);
      panels.push_back(panel);
    }
  const TrainConfig& c = trainer.config();
  write_heatmaps(png_path, panels,
                 "attention: " + c.encoding + " on " + c.task + " (" +
                     std::to_string(trainer.steps_done()) + " steps)");
}

AttentionAverages mean_attention(Trainer& trainer, std::int64_t length, std::int64_t sequences) {
  ag::check(length >= 1 && sequences >= 1, "mean_attention",
            "needs a positive length and number of sequences, got ", length, " and ", sequences);
  const Batch batch = trainer.task().held_out(sequences, length, trainer.config().seed);
  AttentionAverages result;
  for (const ag::Tensor& weights : captured_attention(trainer.model(), batch.inputs)) {
    const auto w = weights.to_vector();  // [B, H, T, T]
    const std::int64_t B = weights.size(0), H = weights.size(1), T = weights.size(2);
    using Profile = std::vector<std::vector<double>>;
    Profile by_offset(H, std::vector<double>(T, 0.0)), by_key = by_offset;
    for (std::int64_t b = 0; b < B; ++b)
      for (std::int64_t h = 0; h < H; ++h)
        for (std::int64_t i = 0; i < T; ++i)
          for (std::int64_t j = 0; j <= i; ++j) {
            const double weight = w[((b * H + h) * T + i) * T + j];
            by_offset[h][i - j] += weight;
            by_key[h][j] += weight;
          }
    // offset r and key j are both seen by the T - r (T - j) queries i >= r (i >= j)
    for (std::int64_t h = 0; h < H; ++h)
      for (std::int64_t r = 0; r < T; ++r) {
        by_offset[h][r] /= double(B * (T - r));
        by_key[h][r] /= double(B * (T - r));
      }
    result.by_offset.push_back(by_offset);
    result.by_key.push_back(by_key);
  }
  return result;
}

namespace {

nlohmann::json history_json(const std::vector<HistoryPoint>& history) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& h : history)
    rows.push_back({{"step", h.step},
                    {"train_loss", h.train_loss},
                    {"lr", h.lr},
                    {"eval_accuracy", h.eval_accuracy},
                    {"eval_loss", h.eval_loss},
                    {"seconds", h.seconds}});
  return rows;
}

void write_csv(const std::string& path, const std::vector<HistoryPoint>& history) {
  std::ostringstream out;
  out << "step,train_loss,lr,eval_accuracy,eval_loss,seconds\n";
  for (const auto& h : history)
    out << h.step << ',' << h.train_loss << ',' << h.lr << ',' << h.eval_accuracy << ','
        << h.eval_loss << ',' << h.seconds << '\n';
  ag::write_file_atomically(path, out.str());
}

void write_curves(const std::string& path, const Trainer& trainer) {
  Series loss{"training loss", {}, {}}, accuracy{"held-out accuracy", {}, {}};
  for (const auto& h : trainer.history()) {
    loss.x.push_back(double(h.step));
    loss.y.push_back(h.train_loss);
    accuracy.x.push_back(double(h.step));
    accuracy.y.push_back(h.eval_accuracy);
  }
  const TrainConfig& c = trainer.config();
  const std::string name = c.encoding + " on " + c.task;
  const std::string stem = path.substr(0, path.size() - 4);
  write_line_plot(stem + "-loss.png", {loss}, "training loss: " + name, "step", "cross-entropy",
                  true);
  write_line_plot(path, {accuracy}, "held-out token accuracy: " + name, "step", "accuracy", false,
                  std::make_pair(0.0, 1.0));
}

}  // namespace

namespace {

// A process killed while writing a file atomically leaves "<name>.tmp.<pid>" behind (never a
// half file under the final name). Those of processes no longer alive are removed.
void remove_stale_temporaries(const std::string& folder) {
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(folder, error)) {
    const std::string name = entry.path().filename().string();
    const auto at = name.rfind(".tmp.");
    if (at == std::string::npos) continue;
    const std::string digits = name.substr(at + 5);
    if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) continue;
    const long pid = std::strtol(digits.c_str(), nullptr, 10);
    if (::kill(pid_t(pid), 0) != 0 && errno == ESRCH) std::filesystem::remove(entry.path(), error);
  }
}

// Everything a run checks before it trains: the evaluation lengths (long enough for the task,
// short enough for memory) and an output folder it can write into. Returns whether it created
// the folder, so that a run that fails can take it away again.
bool prepare_run(const Trainer& trainer, const RunOptions& options,
                 const std::vector<std::int64_t>& lengths) {
  ag::check(options.save_every >= 0, "run", "--save-every must not be negative, got ",
            options.save_every);
  for (const std::int64_t length : lengths) {
    ag::check(length >= trainer.task().min_length() && length <= 100000, "run",
              "evaluation length ", length, " is outside ", trainer.task().min_length(),
              " .. 100000 (task ", trainer.task().name(), ")");
    check_memory(trainer.config(), trainer.config().model.vocab, length);
  }
  namespace fs = std::filesystem;
  std::error_code error;
  const bool existed = fs::exists(options.out_dir, error);
  fs::create_directories(options.out_dir, error);
  ag::check(!error, "run", "cannot create the output folder '", options.out_dir, "' (",
            error.message(), ")");
  // A read-only folder is found now, not after hours of training.
  const std::string probe = options.out_dir + "/.write-test";
  try {
    ag::write_file_atomically(probe, "");
  } catch (const ag::Error& e) {
    if (!existed) fs::remove(options.out_dir, error);
    throw ag::Error("run: cannot write into the output folder '" + options.out_dir + "' (" +
                    e.what() + ")");
  }
  fs::remove(probe, error);
  remove_stale_temporaries(options.out_dir);
  return !existed;
}

RunSummary train_and_write(Trainer& trainer, const RunOptions& options,
                           const std::vector<std::int64_t>& lengths,
                           std::chrono::steady_clock::time_point wall_start) {
  const TrainConfig& config = trainer.config();
  const std::string dir = options.out_dir + "/";
  const std::string checkpoint = dir + "checkpoint.agt";
  const std::string label = config.encoding + "/" + config.task;
  Progress progress(label, config.steps);
  if (options.progress)
    trainer.on_step = [&](std::int64_t step, double loss) {
      char status[64];
      std::snprintf(status, sizeof status, "loss %.4f", loss);
      progress.update(step, status);
    };
  if (options.profile) ag::profile::start();
  std::int64_t saved_at = 0;  // the step of this run's last checkpoint
  if (options.save_every > 0)
    trainer.after_step = [&] {
      if (trainer.steps_done() % options.save_every != 0 || trainer.steps_done() == config.steps)
        return;
      trainer.save(checkpoint);  // atomically: a kill leaves the previous one whole
      saved_at = trainer.steps_done();
    };
  try {
    trainer.train([&](const HistoryPoint& h) {
      if (!options.progress) return;
      char text[160];
      std::snprintf(text, sizeof text, "step %5ld  loss %.4f  held-out accuracy %.4f  %.1fs",
                    long(h.step), h.train_loss, h.eval_accuracy, h.seconds);
      progress.line(text);
    });
  } catch (const ag::Error& e) {
    progress.finish();
    throw ag::Error(std::string(e.what()) + "; " +
                    (saved_at > 0 ? "the last good checkpoint, " + checkpoint + ", is at step " +
                                        std::to_string(saved_at)
                                  : std::string("no checkpoint was saved before it")));
  }
  progress.finish();
  trainer.on_step = nullptr;
  trainer.after_step = nullptr;

  RunSummary summary;
  if (options.profile)
    summary.profile = ag::profile::format(ag::profile::stop(), trainer.steps_done());
  summary.out_dir = options.out_dir;
  summary.final = evaluate_lengths(trainer, lengths, config.eval_sequences);
  summary.train_seconds = trainer.seconds();

  trainer.save(checkpoint);
  write_csv(dir + "history.csv", trainer.history());
  if (options.figures) {  // gnuplot's output is checked after writing (figures.cpp)
    write_attention_figure(trainer, config.length, dir + "attention.png");
    write_curves(dir + "curves.png", trainer);
  }
  summary.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();

  nlohmann::json final_json = nlohmann::json::object();
  for (const auto& [length, eval] : summary.final)
    final_json[std::to_string(length)] = {
        {"accuracy", eval.accuracy}, {"loss", eval.loss}, {"scored_tokens", eval.scored}};
  nlohmann::json run = {{"config", config},
                        {"seed", config.seed},
                        {"parameters", trainer.model().parameter_count()},
                        {"versions", build_versions()},
                        {"threads", ag::max_threads()},
                        {"history", history_json(trainer.history())},
                        {"final", final_json},
                        {"train_seconds", summary.train_seconds},
                        {"wall_seconds", summary.wall_seconds}};
  if (!options.init_from.empty()) run["init_from"] = options.init_from;
  // Written last: a run.json says the run is complete (load_finished_run relies on it).
  ag::write_file_atomically(dir + "run.json", run.dump(2) + "\n");
  return summary;
}

}  // namespace

RunSummary run_training(const TrainConfig& requested, const RunOptions& options) {
  const auto wall_start = std::chrono::steady_clock::now();
  // Everything that can be refused is refused before the folder exists or training starts.
  ag::check(options.init_from.empty() || options.resume_from.empty(), "train",
            "a run either resumes (--resume) or starts from weights (--init), not both");
  std::unique_ptr<Trainer> trainer;
  if (!options.resume_from.empty()) {
    trainer = Trainer::resume(options.resume_from);
    if (options.total_steps > 0) trainer->extend_to(options.total_steps);
  } else {
    trainer = std::make_unique<Trainer>(requested);
    if (!options.init_from.empty()) trainer->load_weights(options.init_from);
  }
  std::vector<std::int64_t> lengths = options.eval_lengths;
  if (lengths.empty()) lengths.push_back(trainer->config().length);
  const bool created = prepare_run(*trainer, options, lengths);
  try {
    return train_and_write(*trainer, options, lengths, wall_start);
  } catch (...) {
    std::error_code error;
    if (created) std::filesystem::remove(options.out_dir, error);  // only when still empty
    throw;
  }
}

namespace {

// Trains runs[i] for each i in `todo`, `jobs` at a time, each on a thread of its own with one
// OpenMP thread. An error in one run stops the others from starting and is thrown again here.
void train_in_parallel(const std::vector<PlannedRun>& runs, const std::vector<std::size_t>& todo,
                       int jobs, std::vector<FinishedRun>& finished) {
  std::mutex mutex;
  std::size_t next = 0, done = 0;
  std::exception_ptr error;
  auto worker = [&] {
    ag::set_max_threads(1);  // this thread's OpenMP setting: the run's kernels stay on it
    for (;;) {
      std::size_t i;
      {
        std::lock_guard<std::mutex> lock(mutex);
        if (error || next == todo.size()) return;
        i = todo[next++];
        std::fprintf(stderr, "run %zu/%zu: training into %s\n", i + 1, runs.size(),
                     runs[i].out_dir.c_str());
      }
      try {
        RunOptions where;
        where.out_dir = runs[i].out_dir;
        where.progress = false;  // bars of several runs would overwrite each other
        RunSummary summary = run_training(runs[i].config, where);
        std::lock_guard<std::mutex> lock(mutex);
        finished[i].summary = std::move(summary);
        ++done;
        std::fprintf(stderr, "finished %zu of %zu: %s\n", done, todo.size(),
                     result_line(finished[i]).c_str());
      } catch (...) {
        std::lock_guard<std::mutex> lock(mutex);
        if (!error) error = std::current_exception();
      }
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < std::min<int>(jobs, int(todo.size())); ++t) threads.emplace_back(worker);
  for (auto& thread : threads) thread.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace

std::vector<FinishedRun> run_or_reuse(const std::vector<PlannedRun>& runs, bool reuse, int jobs) {
  ag::check(jobs >= 1, "run_or_reuse", "jobs must be at least 1, got ", jobs);
  std::vector<FinishedRun> finished;
  std::vector<std::size_t> todo;  // runs to train
  for (const PlannedRun& planned : runs) {
    const std::string at = "run " + std::to_string(finished.size() + 1) + "/" +
                           std::to_string(runs.size()) + ": ";
    FinishedRun run{planned.config, {}, false};
    std::optional<RunSummary> earlier;
    if (reuse) earlier = load_finished_run(planned.config, planned.out_dir);
    if (earlier) {
      std::fprintf(stderr, "%sreusing the finished run in %s (same configuration)\n", at.c_str(),
                   planned.out_dir.c_str());
      run.summary = *earlier;
      run.reused = true;
    } else if (jobs == 1) {
      std::fprintf(stderr, "%straining into %s\n", at.c_str(), planned.out_dir.c_str());
      RunOptions where;
      where.out_dir = planned.out_dir;
      run.summary = run_training(planned.config, where);
    } else {
      todo.push_back(finished.size());
    }
    finished.push_back(std::move(run));
  }
  if (!todo.empty()) train_in_parallel(runs, todo, jobs, finished);
  return finished;
}

std::string result_line(const FinishedRun& run) {
  const TrainConfig& c = run.config;
  const Evaluation& e = run.summary.final.at(c.length);
  char line[240];
  std::snprintf(line, sizeof line,
                "%-11s %-12s %ld layer%s %ld head%s  %5ld steps  seed %lu  accuracy %.4f  "
                "loss %.4f  (%.0f s)",
                c.encoding.c_str(), c.task.c_str(), long(c.model.layers),
                c.model.layers == 1 ? " " : "s", long(c.model.heads),
                c.model.heads == 1 ? " " : "s", long(c.steps), (unsigned long)c.seed,
                e.accuracy, e.loss, run.summary.train_seconds);
  return line;
}

std::optional<RunSummary> load_finished_run(const TrainConfig& config,
                                            const std::string& out_dir) {
  const std::string json_path = out_dir + "/run.json";
  if (!std::filesystem::exists(json_path) || !std::filesystem::exists(out_dir + "/checkpoint.agt"))
    return std::nullopt;
  std::ifstream in(json_path);
  nlohmann::json run;
  try {
    run = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw ag::Error("load_finished_run: '" + json_path + "' is not valid JSON (" + e.what() + ")");
  }
  // Compared as JSON, so that every field of the configuration takes part.
  if (!run.contains("config") || run["config"] != nlohmann::json(config))
    return std::nullopt;
  // A run is complete when its checkpoint reads back and holds all the steps: a 0-byte or
  // damaged checkpoint (a full disk, a kill) means training it again.
  try {
    const auto file = ag::load_tensor_file(out_dir + "/checkpoint.agt");
    if (read_saved_progress(file.metadata, out_dir + "/checkpoint.agt").steps_done != config.steps)
      return std::nullopt;
  } catch (const ag::Error& e) {
    std::fprintf(stderr, "not reusing %s: %s\n", out_dir.c_str(), e.what());
    return std::nullopt;
  }
  RunSummary summary;
  summary.out_dir = out_dir;
  try {
    for (const auto& [length, eval] : run.at("final").items())
      summary.final[std::stoll(length)] = {eval.at("accuracy").get<double>(),
                                           eval.at("loss").get<double>(),
                                           eval.at("scored_tokens").get<std::int64_t>()};
    summary.train_seconds = run.at("train_seconds").get<double>();
    summary.wall_seconds = run.at("wall_seconds").get<double>();
  } catch (const std::exception& e) {
    throw ag::Error("load_finished_run: '" + json_path + "' lacks its results (" + e.what() + ")");
  }
  return summary;
}

}  // namespace pe
