#include "lab/run.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "ag/files.hpp"
#include "ag/io.hpp"
#include "ag/profile.hpp"
#include "ag/simd.hpp"
#include "ag/threads.hpp"
#include "base/folder_lock.hpp"
#include "lab/figures.hpp"
#include "lab/memory.hpp"
#include "lab/progress.hpp"

namespace pe {

std::map<std::int64_t, Evaluation> evaluate_lengths(Trainer& trainer,
                                                    const std::vector<std::int64_t>& lengths,
                                                    std::int64_t sequences,
                                                    EvalPositions positions) {
  std::map<std::int64_t, Evaluation> results;
  for (auto length : lengths) results[length] = trainer.evaluate(length, sequences, positions);
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

// A run of 0 steps (an untrained baseline) has no evaluation over steps: no curves to draw.
void write_curves(const std::string& path, const Trainer& trainer) {
  if (trainer.history().empty()) return;
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

// The files a run writes into its folder (run.hpp), run.json first: a folder without it holds
// no finished run, so it is the first to go when a new run starts there.
const char* const kRunFiles[] = {"run.json",   "history.csv",     "attention.png",
                                 "curves.png", "curves-loss.png", "checkpoint.agt"};

// Removes what the run the folder held left behind (never any other file), so that nothing
// stale (a figure of the old model beside a run of the new one) remains. A resumed run keeps
// the checkpoint it continues: a kill before its first save must leave it in place.
void clear_previous_run(const std::string& folder, bool keep_checkpoint) {
  for (const char* name : kRunFiles) {
    if (keep_checkpoint && std::string(name) == "checkpoint.agt") continue;
    const std::filesystem::path path = std::filesystem::path(folder) / name;
    std::error_code error;
    if (!std::filesystem::is_regular_file(path, error)) continue;
    std::filesystem::remove(path, error);
    ag::check(!error, "run", "cannot remove '", path.string(), "' of the run the folder held (",
              error.message(), ")");
  }
}

// Fails unless a new file can be made in the folder (a read-only folder is found now, not
// after hours of training). The probe has a name of its own, so no two probes ever meet.
void check_writable_folder(const std::string& folder) {
  std::string probe = folder + "/.write-test-XXXXXX";
  const int fd = ::mkstemp(probe.data());
  ag::check(fd >= 0, "run", "cannot write into the output folder '", folder, "' (",
            std::strerror(errno), ")");
  ::close(fd);
  ::unlink(probe.c_str());
}

// A run's history (run.hpp): the segments it was trained in, oldest first, each
//   {"start": steps done when it began, "steps": the run's total steps during it,
//    "init_from": the checkpoint whose weights the run started from (first segment only),
//    "resumed_from": the checkpoint it continued, "other_folder": true when that checkpoint
//    was not the run's own folder's (a copy)}.
// Kept in run.json and, as Trainer::lineage, in the checkpoint, so that a resumed run keeps it.
// `where` names the file in the one-line error that refuses a damaged one.
void check_lineage(const nlohmann::json& lineage, const std::string& where) {
  auto fail = [&](const std::string& why) {
    throw ag::Error("run: '" + where + "': its lineage (how the run was trained) " + why);
  };
  if (!lineage.is_array()) fail("is not a list");
  for (const auto& segment : lineage) {
    if (!segment.is_object()) fail("holds an entry that is not an object");
    for (const char* key : {"start", "steps"})
      if (!segment.contains(key) || !segment[key].is_number_integer() ||
          segment[key].get<std::int64_t>() < 0)
        fail(std::string("has an entry without a whole, non-negative '") + key + "'");
    for (const char* key : {"init_from", "resumed_from"})
      if (segment.contains(key) && !segment[key].is_string())
        fail(std::string("has a '") + key + "' that is not a file name");
    if (segment.contains("other_folder") && !segment["other_folder"].is_boolean())
      fail("has an 'other_folder' that is not true or false");
  }
}

// The lineage a checkpoint keeps; a checkpoint of an older version keeps none (taken as a
// run from scratch).
nlohmann::json lineage_from_text(const std::string& text, const std::string& where) {
  if (text.empty()) return nlohmann::json::array();
  nlohmann::json lineage;
  try {
    lineage = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception&) {
    throw ag::Error("run: '" + where + "': its lineage (how the run was trained) is not JSON");
  }
  check_lineage(lineage, where);
  return lineage;
}

// The lineage a run.json records. One written before lineages were recorded has none, and
// says "init_from" when it was a fine-tune.
nlohmann::json lineage_from_run_json(const nlohmann::json& run, const std::string& where) {
  if (run.contains("lineage")) {
    check_lineage(run["lineage"], where);
    return run["lineage"];
  }
  if (!run.contains("init_from")) return nlohmann::json::array();
  if (!run["init_from"].is_string())
    throw ag::Error("run: '" + where + "': init_from is not a file name");
  return nlohmann::json::array({{{"start", 0}, {"init_from", run["init_from"]}}});
}

}  // namespace

std::string how_trained(const nlohmann::json& lineage, std::int64_t steps) {
  std::vector<std::string> parts;
  std::vector<std::int64_t> totals;  // the schedules the run was trained on, in order
  for (const auto& segment : lineage) {
    if (segment.contains("init_from"))
      parts.push_back("fine-tuned from '" + segment["init_from"].get<std::string>() + "'");
    if (segment.value("other_folder", false))
      parts.push_back("continued from '" + segment["resumed_from"].get<std::string>() +
                      "' in another folder");
    if (segment.contains("steps") &&
        (totals.empty() || totals.back() != segment["steps"].get<std::int64_t>()))
      totals.push_back(segment["steps"].get<std::int64_t>());
  }
  if (totals.empty() || totals.back() != steps) totals.push_back(steps);
  if (totals.size() > 1) {
    std::string list;
    for (const std::int64_t total : totals)
      list += (list.empty() ? "" : ", then ") + std::to_string(total);
    parts.push_back("trained on schedules of " + list + " steps (--resume --steps)");
  }
  std::string text;
  for (const std::string& part : parts) text += (text.empty() ? "" : ", ") + part;
  return text;
}

namespace {

// The task's options as "k=32, ..." for messages ("" when it has none).
std::string task_options_text(const TrainConfig& config) {
  std::string text;
  for (const auto& [key, value] : config.task_options)
    text += (text.empty() ? "" : ", ") + key + "=" + value;
  return text;
}

// The evaluation lengths: long enough for the task, short enough for memory.
void check_lengths(const Trainer& trainer, const std::vector<std::int64_t>& lengths) {
  const Task& task = trainer.task();
  const std::string options = task_options_text(trainer.config());
  for (const std::int64_t length : lengths) {
    ag::check(length >= task.min_length() && length <= limits::length.high, "train",
              "evaluation length ", length, " is outside ", task.min_length(), " .. ",
              limits::length.high, " (task ", task.name(),
              options.empty() ? "" : " with " + options, "); give --eval-lengths within it");
    trainer.task().check_length(length);  // the task's own rules (parity, ...), before training
    check_memory(trainer.config(), trainer.config().model.vocab, length);
  }
}

// The one line of an error thrown during training. What was saved is said only when there is
// something to say: steps of this run were lost (none were when its first step fails, as a
// configuration the checks before training could not see fails), or it continued a checkpoint,
// which a resumed run leaves as it was until its own first save. --resume takes --lr and
// --clip from its checkpoint, so the trainer's hint to lower them is replaced by what can be
// done: a fine-tune from the checkpoint with other rates.
std::string training_failure(std::string message, const RunOptions& options,
                             const std::string& checkpoint, std::int64_t started_at,
                             std::int64_t steps_done, std::int64_t saved_at) {
  const std::string last = saved_at > 0 ? checkpoint : options.resume_from;
  if (!options.resume_from.empty()) {
    const std::string hint = " (a smaller --lr or --clip may help)";
    if (const auto at = message.find(hint); at != std::string::npos) message.erase(at, hint.size());
    message += saved_at > 0 ? "; the last good checkpoint, '" + checkpoint + "', is at step " +
                                  std::to_string(saved_at)
                            : "; the checkpoint it resumed from, '" + options.resume_from +
                                  "' (step " + std::to_string(started_at) + "), is untouched";
    return message +
           "; --resume keeps the run's --lr and --clip, so to go on with smaller ones "
           "start a fine-tune from it (pe train --init " +
           last + " with the run's model options and a smaller --lr or --clip)";
  }
  if (saved_at > 0)
    return message + "; the last good checkpoint, '" + checkpoint + "', is at step " +
           std::to_string(saved_at);
  if (steps_done > started_at) return message + "; no checkpoint was saved before it";
  return message;
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
  const std::int64_t started_at = trainer.steps_done();  // 0, or the step resumed from
  std::int64_t saved_at = 0;                             // the step of this run's last checkpoint
  const std::int64_t save_every = trainer.save_every;
  if (save_every > 0)
    trainer.after_step = [&] {
      if (trainer.steps_done() % save_every != 0 || trainer.steps_done() == config.steps) return;
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
    throw ag::Error(training_failure(e.what(), options, checkpoint, started_at,
                                     trainer.steps_done(), saved_at));
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
  const nlohmann::json lineage = lineage_from_text(trainer.lineage, checkpoint);
  run["lineage"] = lineage;
  // A fine-tune, resumed or not, says so where older versions said it too.
  if (!lineage.empty() && lineage[0].contains("init_from"))
    run["init_from"] = lineage[0]["init_from"];
  // Written last: a run.json says the run is complete (load_finished_run relies on it).
  ag::write_file_atomically(dir + "run.json", run.dump(2) + "\n");
  return summary;
}

}  // namespace

namespace {

// What a new run does to the run its folder holds (check_folder_run).
enum class Arrival {
  start,              // a new run: from scratch, or a fine-tune (--init)
  continue_in_place,  // --resume of the folder's own checkpoint.agt
  copy                // --resume of a checkpoint elsewhere: the run goes on in this folder
};

struct NewRun {
  Arrival arrival = Arrival::start;
  std::string history;  // how_trained of the new run: "" from scratch
  std::string init_from, resume_from;
};

void check_folder_run(const TrainConfig& config, const std::string& out_dir, bool overwrite,
                      const NewRun& run);

// Whether two names are one file (false when either is missing).
bool same_file(const std::string& a, const std::string& b) {
  std::error_code error;
  return std::filesystem::equivalent(a, b, error);
}

}  // namespace

RunSummary run_training(const TrainConfig& requested, const RunOptions& options) {
  source_commit();  // read as the run starts: the summary records the sources it ran
  const auto wall_start = std::chrono::steady_clock::now();
  // Everything that can be refused is refused before the folder exists or training starts.
  ag::check(options.init_from.empty() || options.resume_from.empty(), "train",
            "a run either resumes (--resume) or starts from weights (--init), not both");
  ag::check(!options.out_dir.empty(), "run", "the output folder is empty");
  std::unique_ptr<Trainer> trainer;
  NewRun arriving{Arrival::start, "", options.init_from, options.resume_from};
  nlohmann::json lineage = nlohmann::json::array();
  std::int64_t resumed_at = 0;
  if (!options.resume_from.empty()) {
    trainer = Trainer::resume(options.resume_from);
    lineage = lineage_from_text(trainer->lineage, options.resume_from);
    if (lineage.empty())  // a checkpoint of an older version: taken as a run from scratch
      lineage.push_back({{"start", 0}, {"steps", trainer->config().steps}});
    resumed_at = trainer->steps_done();
    if (options.total_steps > 0) trainer->extend_to(options.total_steps);
    arriving.arrival = same_file(options.resume_from, options.out_dir + "/checkpoint.agt")
                           ? Arrival::continue_in_place
                           : Arrival::copy;
    nlohmann::json segment = {{"start", resumed_at},
                              {"steps", trainer->config().steps},
                              {"resumed_from", options.resume_from}};
    if (arriving.arrival == Arrival::copy) segment["other_folder"] = true;
    lineage.push_back(segment);
  } else {
    trainer = std::make_unique<Trainer>(requested);
    nlohmann::json segment = {{"start", 0}, {"steps", trainer->config().steps}};
    if (!options.init_from.empty()) {
      trainer->load_weights(options.init_from);
      segment["init_from"] = options.init_from;
    }
    lineage.push_back(segment);
  }
  trainer->lineage = lineage.dump();
  arriving.history = how_trained(lineage, trainer->config().steps);
  if (options.save_every) trainer->save_every = *options.save_every;
  ag::check(trainer->save_every >= 0, "run", "--save-every must not be negative, got ",
            trainer->save_every);
  std::vector<std::int64_t> lengths = options.eval_lengths;
  if (lengths.empty()) lengths.push_back(trainer->config().length);
  check_lengths(*trainer, lengths);

  FolderLock lock(options.out_dir, "run");  // from here on, this process alone writes there
  try {
    check_folder_run(trainer->config(), options.out_dir, options.overwrite, arriving);
    check_writable_folder(options.out_dir);
    clear_previous_run(options.out_dir, arriving.arrival == Arrival::continue_in_place);
    remove_stale_temporaries(options.out_dir);
    if (arriving.arrival == Arrival::copy)
      std::fprintf(stderr,
                   "continuing the run of '%s' (step %ld) in '%s' as a copy; '%s' is left as it "
                   "is\n",
                   options.resume_from.c_str(), long(resumed_at), options.out_dir.c_str(),
                   options.resume_from.c_str());
    return train_and_write(*trainer, options, lengths, wall_start);
  } catch (...) {
    lock.abandon();  // the folder goes too if this run made it and nothing is in it
    throw;
  }
}

namespace {

// What differs between two configurations as JSON, "key: A there, B here", up to four keys;
// "" when nothing does. `ignored` keys take no part.
std::string differences(const nlohmann::json& there, const nlohmann::json& here,
                        const std::vector<std::string>& ignored) {
  std::vector<std::string> keys;
  for (const auto* side : {&there, &here})
    for (const auto& item : side->items())
      if (std::find(keys.begin(), keys.end(), item.key()) == keys.end() &&
          std::find(ignored.begin(), ignored.end(), item.key()) == ignored.end())
        keys.push_back(item.key());
  std::string out;
  int shown = 0, more = 0;
  for (const std::string& key : keys) {
    const nlohmann::json a = there.value(key, nlohmann::json());
    const nlohmann::json b = here.value(key, nlohmann::json());
    if (a == b) continue;
    if (shown == 4) {
      ++more;
      continue;
    }
    out += (shown++ ? "; " : "") + key + ": " + a.dump() + " there, " + b.dump() + " here";
  }
  if (more > 0) out += "; and " + std::to_string(more) + " more";
  return out;
}

// run.json as JSON, read as a file of its own (a folder or a FIFO named run.json is refused,
// naming it) and at most 64 MB: a run's summary is a few hundred KB.
nlohmann::json read_run_json(const std::string& path) {
  const std::string text = ag::read_file(path, 64u << 20, "run summary");
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw ag::Error("load_finished_run: '" + path + "' is not valid JSON (" + e.what() + ")");
  }
}

}  // namespace

namespace {

// The run a folder holds: a finished one (run.json) or an unfinished one (a checkpoint.agt that
// reads back), with how it was trained.
struct FolderRun {
  nlohmann::json config;
  std::string history;  // how_trained: "" from scratch
  std::string what;     // "a finished run", "an unfinished run (its checkpoint is at step 4)"
};

std::optional<FolderRun> read_folder_run(const std::string& out_dir) {
  namespace fs = std::filesystem;
  const std::string json_path = out_dir + "/run.json", checkpoint = out_dir + "/checkpoint.agt";
  std::error_code error;
  FolderRun there;
  nlohmann::json lineage;
  if (fs::exists(json_path, error)) {
    const nlohmann::json run = read_run_json(json_path);
    ag::check(run.is_object() && run.contains("config") && run["config"].is_object(), "run", "'",
              json_path, "' has no configuration, so the run it belongs to is unknown; ",
              "add --overwrite to replace it");
    there.config = run["config"];
    lineage = lineage_from_run_json(run, json_path);
    there.what = "a finished run";
  } else if (fs::exists(checkpoint, error)) {
    SavedProgress saved;
    try {
      saved = read_saved_progress(ag::load_tensor_file(checkpoint).metadata, checkpoint);
    } catch (const ag::Error&) {
      return std::nullopt;  // a checkpoint that does not read back holds nothing to keep
    }
    there.config = nlohmann::json(saved.config);
    lineage = lineage_from_text(saved.lineage, checkpoint);
    there.what =
        "an unfinished run (its checkpoint is at step " + std::to_string(saved.steps_done) + ")";
  } else {
    return std::nullopt;
  }
  const nlohmann::json steps = there.config.value("steps", nlohmann::json());
  there.history = how_trained(lineage, steps.is_number_integer() ? steps.get<std::int64_t>() : 0);
  return there;
}

// Refuses, unless `overwrite`, a run that would replace the run its folder holds (run.hpp): a
// run's identity is its configuration and its history. A new run may take the place of the same
// run (the same configuration, trained the same way: training it again gives the same tensors);
// --resume of the folder's own checkpoint continues the run there (the steps may grow); a copy
// (--resume of a checkpoint elsewhere) needs a folder that holds no run.
void check_folder_run(const TrainConfig& config, const std::string& out_dir, bool overwrite,
                      const NewRun& run) {
  if (overwrite) return;
  const std::optional<FolderRun> there = read_folder_run(out_dir);
  if (!there) return;
  std::vector<std::string> ignored{"vocab"};  // follows from the task
  if (run.arrival == Arrival::continue_in_place) ignored.push_back("steps");
  const std::string differ = differences(there->config, nlohmann::json(config), ignored);
  const std::string holds =
      "the output folder '" + out_dir + "' holds " + there->what +
      (differ.empty() ? " of this configuration" : " of another configuration (" + differ + ")") +
      (there->history.empty() ? "" : ", " + there->history);
  const std::string fix = "add --overwrite to replace it, or choose another folder";
  switch (run.arrival) {
    case Arrival::continue_in_place:
      ag::check(differ.empty(), "run", "the output folder '", out_dir, "' holds ", there->what,
                " of another configuration than its checkpoint (", differ, "); ", fix);
      return;
    case Arrival::copy:
      ag::check(false, "run", holds, "; --resume continues the run of '", run.resume_from,
                "' as a copy only into a folder that holds no run: choose an empty or new --out ",
                "(or the checkpoint's own folder, to continue it there), or add --overwrite to ",
                "replace the run in '", out_dir, "'");
      return;
    case Arrival::start:
      ag::check(run.init_from.empty() || !same_file(run.init_from, out_dir + "/checkpoint.agt"),
                "run", "--init '", run.init_from, "' is the checkpoint of the run that --out '",
                out_dir, "' holds, which the fine-tune would replace; choose another --out, ",
                "or add --overwrite to replace that run");
      if (differ.empty() && there->history == run.history) return;  // the same run again
      ag::check(
          false, "run", holds,
          there->history == run.history
              ? ""
              : "; this run " + (run.history.empty() ? "trains from scratch" : "is " + run.history),
          "; ", fix);
  }
}

}  // namespace

void check_previous_run(const TrainConfig& config, const std::string& out_dir, bool overwrite) {
  check_folder_run(config, out_dir, overwrite, NewRun{});
}

namespace {

// Trains runs[i] for each i in `todo`, `jobs` at a time, each on a thread of its own with one
// OpenMP thread. An error in one run stops the others from starting and is thrown again here.
void train_in_parallel(const std::vector<PlannedRun>& runs, const std::vector<std::size_t>& todo,
                       int jobs, bool overwrite, std::vector<FinishedRun>& finished) {
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
        where.overwrite = overwrite;
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

// The checks of run_or_reuse before the first run trains (run.hpp). Returns for each run the
// summary of the finished run it reuses, if any.
std::vector<std::optional<RunSummary>> plan_run_list(const std::vector<PlannedRun>& runs,
                                                     const RunListOptions& how) {
  ag::check(how.jobs >= 1, "run_or_reuse", "jobs must be at least 1, got ", how.jobs);
  std::map<std::string, std::size_t> folders;  // two runs in one folder would replace each other
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const std::string folder = std::filesystem::path(runs[i].out_dir).lexically_normal().string();
    const auto [at, added] = folders.emplace(folder, i);
    ag::check(added, "run_or_reuse", "runs ", at->second + 1, " and ", i + 1,
              " would both be written into '", runs[i].out_dir, "'");
  }
  std::vector<std::optional<RunSummary>> earlier;
  for (const PlannedRun& planned : runs) {
    check_trainable(planned.config);
    earlier.push_back(how.reuse ? load_finished_run(planned.config, planned.out_dir)
                                : std::nullopt);
    if (!earlier.back()) check_previous_run(planned.config, planned.out_dir, how.overwrite);
  }
  return earlier;
}

}  // namespace

std::vector<FinishedRun> run_or_reuse(const std::vector<PlannedRun>& runs,
                                      const RunListOptions& how,
                                      const std::function<void()>& checked) {
  const std::vector<std::optional<RunSummary>> earlier = plan_run_list(runs, how);
  if (checked) checked();
  std::vector<FinishedRun> finished;
  std::vector<std::size_t> todo;  // runs to train, in order
  for (const PlannedRun& planned : runs) {
    const std::string at =
        "run " + std::to_string(finished.size() + 1) + "/" + std::to_string(runs.size()) + ": ";
    FinishedRun run{planned.config, {}, false};
    if (const auto& reused = earlier[finished.size()]) {
      std::fprintf(stderr, "%sreusing the finished run in %s (same configuration)\n", at.c_str(),
                   planned.out_dir.c_str());
      run.summary = *reused;
      run.reused = true;
    } else {
      todo.push_back(finished.size());
    }
    finished.push_back(std::move(run));
  }
  if (how.jobs > 1) {
    if (!todo.empty()) train_in_parallel(runs, todo, how.jobs, how.overwrite, finished);
    return finished;
  }
  for (const std::size_t i : todo) {
    std::fprintf(stderr, "run %zu/%zu: training into %s\n", i + 1, runs.size(),
                 runs[i].out_dir.c_str());
    RunOptions where;
    where.out_dir = runs[i].out_dir;
    where.overwrite = how.overwrite;
    finished[i].summary = run_training(runs[i].config, where);
  }
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
                c.model.heads == 1 ? " " : "s", long(c.steps), (unsigned long)c.seed, e.accuracy,
                e.loss, run.summary.train_seconds);
  return line;
}

std::optional<RunSummary> load_finished_run(const TrainConfig& config, const std::string& out_dir) {
  const std::string json_path = out_dir + "/run.json";
  if (!std::filesystem::exists(json_path) || !std::filesystem::exists(out_dir + "/checkpoint.agt"))
    return std::nullopt;
  const nlohmann::json run = read_run_json(json_path);
  // Compared as JSON, so that every field of the configuration takes part.
  if (!run.is_object() || !run.contains("config") || run["config"] != nlohmann::json(config))
    return std::nullopt;
  // Only a run trained from scratch is the row of a table: a fine-tune, a copy or a run whose
  // steps were raised is not reused (and check_previous_run refuses to replace it unasked).
  if (!how_trained(lineage_from_run_json(run, json_path), config.steps).empty())
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
  // Every value a table or a chapter would quote, in its range: an accuracy of 7.5 is a
  // damaged file, not 750%.
  auto number = [&](const nlohmann::json& value, const std::string& what, double low, double high) {
    const double v = value.get<double>();
    ag::check(std::isfinite(v) && v >= low && v <= high, "load_finished_run", "'", json_path,
              "': ", what, " is ", value.dump(), ", outside ", low, " .. ", high);
    return v;
  };
  try {
    for (const auto& [length, eval] : run.at("final").items()) {
      std::int64_t L = 0;
      const auto [end, error] = std::from_chars(length.data(), length.data() + length.size(), L);
      ag::check(error == std::errc() && end == length.data() + length.size() && L >= 1 &&
                    L <= limits::length.high,
                "load_finished_run", "'", json_path, "': '", length,
                "' is not an evaluation length");
      const std::string at = " at length " + length;
      ag::check(eval.at("scored_tokens").is_number_integer(), "load_finished_run", "'", json_path,
                "': scored_tokens", at, " is not a whole number");
      summary.final[L] = {number(eval.at("accuracy"), "accuracy" + at, 0, 1),
                          number(eval.at("loss"), "loss" + at, 0, INFINITY),
                          eval.at("scored_tokens").get<std::int64_t>()};
      ag::check(summary.final[L].scored >= 1, "load_finished_run", "'", json_path,
                "': scored_tokens", at, " is ", summary.final[L].scored, ", not at least 1");
    }
    summary.train_seconds = number(run.at("train_seconds"), "train_seconds", 0, INFINITY);
    summary.wall_seconds = number(run.at("wall_seconds"), "wall_seconds", 0, INFINITY);
  } catch (const nlohmann::json::exception& e) {
    throw ag::Error("load_finished_run: '" + json_path + "' lacks its results (" + e.what() + ")");
  }
  ag::check(summary.final.count(config.length) == 1, "load_finished_run", "'", json_path,
            "' has no result at the training length ", config.length);
  return summary;
}

}  // namespace pe
