#include "run.hpp"

#include <omp.h>

#include <chrono>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "ag/profile.hpp"
#include "figures.hpp"
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

namespace pe {

std::map<std::string, std::string> build_versions() {
  return {{"git_commit", PE_GIT_COMMIT},
          {"compiler", std::string("g++ ") + __VERSION__},
          {"build_type", PE_BUILD_TYPE},
          {"simd", PE_ARCH_NAME}};
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

void write_attention_figure(Trainer& trainer, std::int64_t length, const std::string& png_path) {
  const Batch sample = trainer.task().held_out(1, length, trainer.config().seed);
  const auto weights = captured_attention(trainer.model(), sample.inputs);  // per layer [1, H, T, T]
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
  std::ofstream out(path);
  ag::check(out.good(), "run", "cannot write '", path, "'");
  out << "step,train_loss,lr,eval_accuracy,eval_loss,seconds\n";
  for (const auto& h : history)
    out << h.step << ',' << h.train_loss << ',' << h.lr << ',' << h.eval_accuracy << ','
        << h.eval_loss << ',' << h.seconds << '\n';
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

RunSummary run_training(const TrainConfig& requested, const RunOptions& options) {
  const auto wall_start = std::chrono::steady_clock::now();
  std::error_code error;
  std::filesystem::create_directories(options.out_dir, error);
  ag::check(!error, "run", "cannot create the output folder '", options.out_dir, "' (",
            error.message(), ")");

  std::unique_ptr<Trainer> resumed;
  if (!options.resume_from.empty()) {
    resumed = Trainer::resume(options.resume_from);
    if (options.total_steps > 0) resumed->extend_to(options.total_steps);
  }
  Trainer& trainer = resumed ? *resumed : *(resumed = std::make_unique<Trainer>(requested));
  const TrainConfig& config = trainer.config();
  const std::string label = config.encoding + "/" + config.task;
  Progress progress(label, config.steps);
  if (options.progress)
    trainer.on_step = [&](std::int64_t step, double loss) {
      char status[64];
      std::snprintf(status, sizeof status, "loss %.4f", loss);
      progress.update(step, status);
    };
  if (options.profile) ag::profile::start();
  trainer.train([&](const HistoryPoint& h) {
    if (!options.progress) return;
    char text[160];
    std::snprintf(text, sizeof text, "step %5ld  loss %.4f  held-out accuracy %.4f  %.1fs",
                  long(h.step), h.train_loss, h.eval_accuracy, h.seconds);
    progress.line(text);
  });
  progress.finish();

  RunSummary summary;
  if (options.profile)
    summary.profile = ag::profile::format(ag::profile::stop(), trainer.steps_done());
  summary.out_dir = options.out_dir;
  std::vector<std::int64_t> lengths = options.eval_lengths;
  if (lengths.empty()) lengths.push_back(config.length);
  summary.final = evaluate_lengths(trainer, lengths, config.eval_sequences);
  summary.train_seconds = trainer.seconds();

  const std::string dir = options.out_dir + "/";
  trainer.save(dir + "checkpoint.agt");
  write_csv(dir + "history.csv", trainer.history());
  if (options.figures) {
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
                        {"threads", omp_get_max_threads()},
                        {"history", history_json(trainer.history())},
                        {"final", final_json},
                        {"train_seconds", summary.train_seconds},
                        {"wall_seconds", summary.wall_seconds}};
  std::ofstream out(dir + "run.json");
  ag::check(out.good(), "run", "cannot write '", dir, "run.json'");
  out << run.dump(2) << '\n';
  return summary;
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
    omp_set_num_threads(1);  // this thread's OpenMP setting: the run's kernels stay on it
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
