// Chapter 9's experiment, on chapter 8's bench: KERPLE (both forms), FIRE, the dynamic
// position bias and xPos, beside chapter 8's rows that they generalise, trained at length 32
// and evaluated at 32 .. 512 on ShiftK, Copy and the fortunes character model, three seeds;
// then the learned functions themselves: each head's bias b(d) against the distance, before
// and after training.
//
//   ch09_experiment [--steps N] [--seed S] [--out DIR] [--retrain] [--fast]  (--help for more)
//
// Runs already finished in their folders with the same configuration are reused. The
// experiment writes <out>/summary.json and <out>/tables.md; the chapter quotes both.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ag/files.hpp"
#include "chapters/08-length/bench_experiment.hpp"
#include "chapters/08-length/extrapolation.hpp"
#include "chapters/08-length/fortunes_corpus.hpp"
#include "chapters/08-length/length_tables.hpp"
#include "chapters/09-learned-distance/decay_curves.hpp"
#include "chapters/09-learned-distance/distance_plan.hpp"
#include "chapters/09-learned-distance/fire.hpp"
#include "lab/chapter_options.hpp"
#include "lab/figures.hpp"
#include "lab/run.hpp"

using nlohmann::json;
using pe::ch08::kScoredCharacters;
using pe::ch08::kSyntheticTokens;
using pe::ch08::kTrainLength;
using namespace pe::ch09;

constexpr const char* kAbout =
    "Chapter 9: KERPLE, FIRE, the dynamic position bias and xPos beside chapter 8's rows, "
    "trained at length 32 and evaluated at 32..512 on ShiftK, Copy and the fortunes character "
    "model; each head's learned bias against the distance.";

// The length at which the bias curves are read: the longest evaluation length.
constexpr std::int64_t kCurveLength = 512;
// The rows whose bias is a function of the distance, drawn as curves.
inline const std::vector<std::string> kCurveRows = {"alibi",          "t5",   "kerple",
                                                    "kerple (power)", "fire", "dpb"};
inline const std::vector<std::string> kCurveTasks = {"shiftk", "charlm"};

bool is_text(const std::string& task) { return task == std::string("charlm"); }

// Everything the steps of the experiment share.
struct Experiment {
  const pe::ChapterOptions& options;
  std::vector<std::int64_t> held_out;  // the held-out fortunes, as token ids
  std::vector<std::int64_t> lengths;   // the evaluation lengths
  std::int64_t seeds = 1;
  json& summary;
  std::string tables = {};
  // results[task][row][s]: the row's results at every length, for seed s
  std::map<std::string, std::map<std::string, std::vector<std::vector<pe::LengthResult>>>> results =
      {};
  // The seed-1 model of each row, by "task/row"
  std::map<std::string, std::unique_ptr<pe::Trainer>> seed1_models = {};
};

// FIRE's learned c and threshold L in each layer of a model (they start at 0.1 and 512).
json fire_parameters(const pe::Decoder& model) {
  json layers = json::array();
  for (const auto& block : model.blocks) {
    const auto* part =
        dynamic_cast<const pe::DistanceBiasPositions*>(block->attention.positions.get());
    const auto* fire = part ? dynamic_cast<const pe::FireBias*>(&part->function()) : nullptr;
    if (fire == nullptr) return nullptr;
    layers.push_back({{"c", std::abs(fire->c.item())}, {"L", fire->threshold().item()}});
  }
  return layers;
}

void evaluate_runs(Experiment& e, const std::vector<DistanceRun>& plan,
                   const std::vector<pe::FinishedRun>& finished) {
  for (std::size_t r = 0; r < finished.size(); ++r) {
    const pe::TrainConfig& c = finished[r].config;
    const Row& row = plan[r].row;
    auto trainer = pe::Trainer::resume(finished[r].summary.out_dir + "/checkpoint.agt");
    const std::vector<pe::LengthResult> at_lengths =
        pe::evaluate_on_bench(*trainer, e.lengths, e.held_out);
    json runs_json = json::array();
    for (const auto& result : at_lengths) runs_json.push_back(pe::length_result_json(result));
    e.summary["runs"][c.task][row.name]["seed " + std::to_string(c.seed)] = {
        {"train_seconds", finished[r].summary.train_seconds}, {"results", runs_json}};
    e.results[c.task][row.name].push_back(at_lengths);
    if (c.encoding == "fire")
      e.summary["fire_learned"][c.task][row.name]["seed " + std::to_string(c.seed)] =
          fire_parameters(trainer->model());
    if (c.seed == e.options.seed) e.seed1_models[c.task + "/" + row.name] = std::move(trainer);
  }
}

std::string what_is_shown(const Experiment& e, const std::string& task) {
  const std::string over =
      e.seeds == 1 ? "seed " + std::to_string(e.options.seed)
                   : "mean ± standard deviation over " + std::to_string(e.seeds) + " seeds";
  return (is_text(task) ? "held-out bits per character (" + std::to_string(kScoredCharacters) +
                              " characters at each length), "
                        : "held-out token accuracy (" + std::to_string(kSyntheticTokens) +
                              " tokens at each length), ") +
         over;
}

// A task's table (chapter 8's rows first, then this chapter's) and its figure.
void write_task_table(Experiment& e, const std::string& task) {
  const bool text = is_text(task);
  std::string table = pe::length_table_header({"encoding", "chapter"}, e.lengths, kTrainLength);
  // Two figures, so that each has few enough lines to read: the encodings at positions 0 .. T-1
  // (chapter 8's and this chapter's), and randomized positions beside the rows they wrap.
  pe::MeanRows plain, randomized;
  for (const Row& row : kRows) {
    const pe::RowOverSeeds r = pe::row_over_seeds(e.results[task][row.name], e.lengths, text);
    e.summary["means"][task][row.name] = r.summary;
    table += "| " + row.name + " | " + (row.from_chapter_8 ? "8" : "9") + " |" + r.cells + "\n";
    (row.random_positions > 0 ? randomized : plain).push_back({row.name, r.means});
  }
  for (const Row& row : kRows)  // the plain rows that a randomized row wraps, beside it
    for (const auto& wrapped : randomized)
      if (row.random_positions == 0 && wrapped.first == row.name + " + rp") {
        const auto same = std::find_if(plain.begin(), plain.end(),
                                       [&](const auto& p) { return p.first == row.name; });
        randomized.push_back(*same);
      }
  e.summary["tables"][task] = pe::split_lines(table);
  e.tables += "\n" + task + ": " + what_is_shown(e, task) + "\n\n" + table;
  const std::string seeds =
      e.seeds == 1 ? std::string("one seed") : "mean of " + std::to_string(e.seeds) + " seeds";
  const std::string title = text ? "fortunes: bits per character" : task + ": held-out accuracy";
  const std::string figure = text ? std::string("charlm_bits") : task + "_accuracy";
  const std::string label = text ? std::string("fortunes bits/char") : task + " accuracy";
  pe::plot_against_length(e.options.out + "/" + figure + ".png",
                          title + ", trained at length 32 (" + seeds + ")",
                          text ? "bits per character" : "accuracy", plain,
                          pe::length_figure_y_range(text, plain), kTrainLength);
  pe::plot_against_length(
      e.options.out + "/" + figure + "_rp.png",
      label + ", with and without randomized positions (" +
          (e.seeds == 1 ? std::string("1 seed") : std::to_string(e.seeds) + " seeds") + ")",
      text ? "bits per character" : "accuracy", randomized,
      pe::length_figure_y_range(text, randomized), kTrainLength);
}

// A run's name in file names: "kerple (power)" -> "kerple-power".
std::string file_name(const std::string& row) {
  std::string name;
  for (char c : row)
    if (std::isalnum(static_cast<unsigned char>(c)))
      name += c;
    else if (!name.empty() && name.back() != '-')
      name += '-';
  while (!name.empty() && name.back() == '-') name.pop_back();
  return name;
}

// One figure of a model's curves, a line per head of the first layer, and its summary entry.
json record_curves(const Experiment& e, const std::vector<std::vector<double>>& curves,
                   const std::string& png, const std::string& title) {
  std::vector<pe::Series> lines;
  json heads = json::array();
  for (std::size_t h = 0; h < curves.size(); ++h) {
    pe::Series s{"head " + std::to_string(h), {}, {}};
    json at = json::object();
    for (std::size_t d = 0; d < curves[h].size(); ++d) {
      s.x.push_back(std::log2(1.0 + double(d)));  // the near distances spread out
      s.y.push_back(curves[h][d]);
    }
    for (std::int64_t d : kBiasDistances)
      if (d < std::int64_t(curves[h].size())) at[std::to_string(d)] = curves[h][std::size_t(d)];
    heads.push_back(at);
    lines.push_back(s);
  }
  pe::write_line_plot(e.options.out + "/" + png, lines, title,
                      "log2(1 + d), d = i - j the distance (query at " +
                          std::to_string(kCurveLength - 1) + "; 5 = training length 32)",
                      "bias b(d) added to the score");
  return heads;
}

// One line of the family's figure: the mean over the heads of b(d) - b(0), divided by its size
// at the longest distance of training (31), so that every encoding starts at 0, passes -1 at
// d = 31 and the lines differ only in their shape: how they bend inside training, and how fast
// they fall past it.
pe::Series family_line(const std::string& name, const std::vector<std::vector<double>>& curves) {
  std::vector<double> mean(curves.front().size(), 0.0);
  for (std::size_t d = 0; d < mean.size(); ++d)
    for (const auto& head : curves) mean[d] += (head[d] - head[0]) / double(curves.size());
  const std::size_t last = std::min<std::size_t>(kTrainLength - 1, mean.size() - 1);
  const double size = std::abs(mean[last]) > 0 ? std::abs(mean[last]) : 1.0;
  pe::Series line{name, {}, {}};
  for (std::size_t d = 0; d < mean.size(); ++d) {
    line.x.push_back(std::log2(1.0 + double(d)));
    line.y.push_back(mean[d] / size);
  }
  return line;
}

// The decay family: each bias row's b(d) in the first layer, at initialisation and after
// training on each curve task (seed 1): a figure per row and state with a line per head, and
// a figure per state with a line per row (the family).
void write_decay_curves(Experiment& e) {
  std::map<std::string, std::vector<pe::Series>> family;  // by state: "initial", a task
  for (const std::string& name : kCurveRows) {
    const std::string file = file_name(name);
    const pe::Trainer& any = *e.seed1_models.at(kCurveTasks.front() + "/" + name);
    pe::Trainer initial(any.config());  // the same seed: the weights before the first step
    const auto initial_curves = pe::bias_against_distance(initial.model(), 0, kCurveLength);
    e.summary["curves"][name]["initial"] =
        record_curves(e, initial_curves, "bias_" + file + "_initial.png",
                      name + ": b(d) per head at initialisation");
    family["initial"].push_back(family_line(name, initial_curves));
    for (const std::string& task : kCurveTasks) {
      pe::Trainer& trained = *e.seed1_models.at(task + "/" + name);
      const auto curves = pe::bias_against_distance(trained.model(), 0, kCurveLength);
      e.summary["curves"][name][task] =
          record_curves(e, curves, "bias_" + file + "_" + task + ".png",
                        name + ": b(d) per head after training on " + task + " (layer 1, seed 1)");
      family[task].push_back(family_line(name, curves));
    }
  }
  for (const auto& [state, lines] : family)
    pe::write_line_plot(
        e.options.out + "/decay_family_" + state + ".png", lines,
        "decay family, " +
            (state == "initial" ? std::string("at initialisation") : "trained on " + state) +
            " (head mean, scaled to -1 at d = 31)",
        "log2(1 + d), d = i - j the distance (query at " + std::to_string(kCurveLength - 1) +
            "; 5 = training length 32)",
        "(b(d) - b(0)) / |b(31) - b(0)|", false, std::make_pair(-6.0, 1.0));
}

// The rows of kLongRows on ShiftK, seed 1, trained kLongTraining times longer than the others, and
// their accuracy at every length beside the same rows' 500-step models.
void write_long_training(Experiment& e) {
  const std::int64_t steps = kLongTraining * e.options.steps;
  std::vector<pe::PlannedRun> planned;
  for (const std::string& name : kLongRows) {
    const Row& row =
        *std::find_if(kRows.begin(), kRows.end(), [&](const Row& r) { return r.name == name; });
    planned.push_back({distance_config(row, "shiftk", steps, e.options.seed),
                       e.options.out + "/runs/shiftk-long/" + run_name(row) + "-s" +
                           std::to_string(e.options.seed)});
  }
  const auto finished = pe::run_or_reuse(planned, e.options.run_list(2));
  std::string table = pe::length_table_header({"encoding", "steps"}, e.lengths, kTrainLength);
  for (std::size_t r = 0; r < finished.size(); ++r) {
    auto trainer = pe::Trainer::resume(finished[r].summary.out_dir + "/checkpoint.agt");
    const auto long_results = pe::evaluate_past_training(*trainer, e.lengths, kSyntheticTokens);
    const auto& short_results = e.results["shiftk"][kLongRows[r]].front();  // seed 1
    for (const auto& [results, row_steps] :
         {std::pair{short_results, e.options.steps}, std::pair{long_results, steps}}) {
      table += "| " + kLongRows[r] + " | " + std::to_string(row_steps) + " |";
      json at = json::object();
      for (const auto& result : results) {
        table.append(" ").append(result.ran ? pe::fixed_digits(result.accuracy, 3)
                                            : pe::cannot_run_cell(result.error));
        table.append(" |");
        at[std::to_string(result.length)] = pe::length_result_json(result);
      }
      table += "\n";
      e.summary["long_training"][kLongRows[r]][std::to_string(row_steps)] = at;
    }
  }
  e.summary["tables"]["long_training"] = pe::split_lines(table);
  e.tables += "\nshiftk, seed " + std::to_string(e.options.seed) + ", " +
              std::to_string(e.options.steps) + " and " + std::to_string(steps) +
              " steps: held-out token accuracy\n\n" + table;
}

void run(const pe::ChapterOptions& options) {
  const pe::FortunesSplit corpus = pe::split_fortunes_corpus(pe::kFortunesFolder);
  const std::string train_text = options.out + "/fortunes-train.txt";
  ag::write_file_atomically(train_text, corpus.train);
  const pe::CharVocabulary vocabulary(corpus.train);

  Experiment e{options, vocabulary.encode(corpus.held_out),
               options.fast ? pe::ch08::kFastLengths : pe::ch08::kLengths,
               options.fast ? 1 : pe::ch08::kSeeds, pe::experiment_summary()};
  const std::vector<DistanceRun> plan = plan_distance_runs(
      options.out, options.seed, e.seeds, options.steps, train_text, vocabulary.size());
  std::vector<pe::PlannedRun> planned;
  for (const DistanceRun& p : plan) planned.push_back(p.run);
  const std::vector<pe::FinishedRun> finished = pe::run_or_reuse(planned, options.run_list(2));

  const pe::TrainConfig& shape = plan.front().run.config;
  pe::record_bench_setup(e.summary, shape, e.lengths, e.seeds, options.fast);
  e.summary["random_positions_max"] = kRandomPositionsMax;
  evaluate_runs(e, plan, finished);
  for (const std::string& task : pe::ch08::kTasks) write_task_table(e, task);
  write_decay_curves(e);
  write_long_training(e);
  ag::write_file_atomically(options.out + "/tables.md", e.tables);
  std::printf("%s\ntables in %s/tables.md\n", e.tables.c_str(), options.out.c_str());
}

int main(int argc, char** argv) { return pe::run_bench_experiment(argc, argv, "09", kAbout, run); }
