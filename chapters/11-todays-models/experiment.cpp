// Chapter 11's experiment, on chapter 8's bench: what today's models do with positions, trained
// at length 32 and evaluated at 32 .. 512 on ShiftK, Copy and the fortunes character model,
// three seeds: p-RoPE at three proportions beside chapter 5's partial rotation, local and
// global layers, NoPE layers with and without Llama 4's temperature, a temperature alone, and
// PoPE. Then a trained RoPE language model stretched from 32 to 512 by chapter 8's rules and by
// Hugging Face's llama3 and longrope (its factors searched on training text).
//
//   ch11_experiment [--steps N] [--seed S] [--out DIR] [--retrain] [--fast]  (--help for more)
//
// Runs already finished in their folders with the same configuration are reused. The
// experiment writes <out>/summary.json and <out>/tables.md; the chapter quotes both.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ag/files.hpp"
#include "chapters/08-length/bench_experiment.hpp"
#include "chapters/08-length/context_extension.hpp"
#include "chapters/08-length/extrapolation.hpp"
#include "chapters/08-length/fortunes_corpus.hpp"
#include "chapters/08-length/length_tables.hpp"
#include "chapters/11-todays-models/hf_rope.hpp"
#include "chapters/11-todays-models/todays_plan.hpp"
#include "lab/chapter_options.hpp"
#include "lab/figures.hpp"
#include "lab/run.hpp"

using nlohmann::json;
using pe::ch08::kScoredCharacters;
using pe::ch08::kSyntheticTokens;
using pe::ch08::kTrainLength;
using namespace pe::ch11;

constexpr const char* kAbout =
    "Chapter 11: p-RoPE, local and global layers, NoPE layers with a temperature and PoPE "
    "beside RoPE, trained at length 32 and evaluated at 32..512 on ShiftK, Copy and the "
    "fortunes character model; a RoPE language model stretched to 512 by linear, NTK, dynamic, "
    "YaRN, llama3 and longrope.";

// The rows drawn together: the ways of turning q and k, and the ways of mixing layers.
inline const std::vector<std::string> kTurningRows = {
    "rope", "rope, half turned", "p-rope 0.25", "p-rope 0.5", "p-rope 0.75", "pope", "none"};
inline const std::vector<std::string> kLayerRows = {
    "rope", "local + global", "chunked + nope", "chunked + nope, temperature", "rope, temperature",
    "none"};

bool is_text(const std::string& task) { return task == std::string("charlm"); }

// Everything the steps of the experiment share.
struct Experiment {
  const pe::ChapterOptions& options;
  std::vector<std::int64_t> held_out;  // the held-out fortunes, as token ids
  std::vector<std::int64_t> search;    // training text for longrope's search, as token ids
  std::vector<std::int64_t> lengths;   // the evaluation lengths
  std::int64_t seeds = 1;
  json& summary;
  std::string tables = {};
  // results[task][row][s]: the row's results at every length, for seed s
  std::map<std::string, std::map<std::string, std::vector<std::vector<pe::LengthResult>>>> results =
      {};
};

void evaluate_runs(Experiment& e, const std::vector<TodaysRun>& plan,
                   const std::vector<pe::FinishedRun>& finished) {
  for (std::size_t r = 0; r < finished.size(); ++r) {
    const pe::TrainConfig& c = finished[r].config;
    auto trainer = pe::Trainer::resume(finished[r].summary.out_dir + "/checkpoint.agt");
    const std::vector<pe::LengthResult> at_lengths =
        pe::evaluate_on_bench(*trainer, e.lengths, e.held_out);
    json runs_json = json::array();
    for (const auto& result : at_lengths) runs_json.push_back(pe::length_result_json(result));
    e.summary["runs"][c.task][plan[r].row.name]["seed " + std::to_string(c.seed)] = {
        {"train_seconds", finished[r].summary.train_seconds}, {"results", runs_json}};
    e.results[c.task][plan[r].row.name].push_back(at_lengths);
  }
}

std::string over_seeds(const Experiment& e) {
  return e.seeds == 1 ? "seed " + std::to_string(e.options.seed)
                      : "mean ± standard deviation over " + std::to_string(e.seeds) + " seeds";
}

std::string what_is_shown(const Experiment& e, const std::string& task) {
  return (is_text(task) ? "held-out bits per character (" + std::to_string(kScoredCharacters) +
                              " characters at each length), "
                        : "held-out token accuracy (" + std::to_string(kSyntheticTokens) +
                              " tokens at each length), ") +
         over_seeds(e);
}

// A task's table (every row) and its two figures (the turning rows, the layer rows).
void write_task_table(Experiment& e, const std::string& task) {
  const bool text = is_text(task);
  std::string table = pe::length_table_header({"encoding", "chapter"}, e.lengths, kTrainLength);
  std::map<std::string, std::vector<pe::LengthResult>> means;
  for (const Row& row : kRows) {
    const pe::RowOverSeeds r = pe::row_over_seeds(e.results[task][row.name], e.lengths, text);
    e.summary["means"][task][row.name] = r.summary;
    table += "| " + row.name + " | " + row.chapter + " |" + r.cells + "\n";
    means[row.name] = r.means;
  }
  e.summary["tables"][task] = pe::split_lines(table);
  e.tables += "\n" + task + ": " + what_is_shown(e, task) + "\n\n" + table;
  const std::string seeds =
      e.seeds == 1 ? std::string("one seed") : "mean of " + std::to_string(e.seeds) + " seeds";
  const std::string title = text ? "fortunes: bits per character" : task + ": held-out accuracy";
  const std::string figure = text ? std::string("charlm_bits") : task + "_accuracy";
  for (const auto& [suffix, names, what] :
       {std::tuple{"turning", kTurningRows, "how q and k turn"},
        std::tuple{"layers", kLayerRows, "layers that differ"}}) {
    pe::MeanRows rows;
    for (const std::string& name : names) rows.push_back({name, means.at(name)});
    pe::plot_against_length(e.options.out + "/" + figure + "_" + suffix + ".png",
                            title + ", " + what + " (" + seeds + ")",
                            text ? "bits per character" : "accuracy", rows,
                            pe::length_figure_y_range(text, rows), kTrainLength);
  }
}

std::string factors_text(const std::vector<double>& factors) {
  std::string s;
  for (double f : factors) s.append(s.empty() ? "" : ", ").append(pe::fixed_digits(f, 0));
  return s;
}

// LongRoPE in miniature: every non-decreasing choice of one rescale factor per plane, scored by
// the bits on training text at the stretch length; the best one.
std::vector<double> search_longrope(const Experiment& e, const pe::TrainConfig& rope,
                                    const std::string& checkpoint, std::int64_t length,
                                    std::int64_t planes, json& record) {
  std::vector<double> best;
  double best_bits = std::numeric_limits<double>::infinity();
  std::int64_t tried = 0;
  for (const std::vector<double>& factors : longrope_search_space(kLongropeCandidates, planes)) {
    pe::TrainConfig c = rope;
    c.encoding_options = stretch_options("longrope", kStretch, kTrainLength, factors);
    auto model = pe::trainer_from_checkpoint(c, checkpoint);
    const auto r = pe::held_out_bits(model->model(), e.search, length, kSearchCharacters);
    ++tried;
    if (r.ran && r.bits < best_bits) {
      best_bits = r.bits;
      best = factors;
    }
  }
  ag::check(!best.empty(), "ch11_experiment", "no longrope factors could run at ", length);
  record = {{"candidates", tried},
            {"factors", best},
            {"search_bits", best_bits},
            {"search_length", length}};
  return best;
}

// A trained RoPE language model (each seed's "rope" charlm run) stretched from 32 by s = 16
// under each rule, evaluated on the held-out text without further training.
void write_stretch(Experiment& e, const std::vector<TodaysRun>& plan,
                   const std::vector<pe::FinishedRun>& finished) {
  // [stretch]
  const std::int64_t longest = e.lengths.back();
  std::map<std::string, std::vector<std::vector<pe::LengthResult>>> results;  // rule -> seeds
  for (std::size_t r = 0; r < finished.size(); ++r) {
    if (plan[r].row.name != "rope" || !is_text(finished[r].config.task)) continue;
    const pe::TrainConfig& rope = finished[r].config;
    const std::string checkpoint = finished[r].summary.out_dir + "/checkpoint.agt";
    const std::string seed = "seed " + std::to_string(rope.seed);
    const std::int64_t planes = rope.model.width / rope.model.heads / 2;
    std::vector<double> long_factor;
    for (const std::string& rule : kStretchRules) {
      if (rule == "longrope")
        long_factor = search_longrope(e, rope, checkpoint, longest, planes,
                                      e.summary["longrope_search"][seed]);
      pe::TrainConfig c = rope;
      c.encoding_options = stretch_options(rule, kStretch, kTrainLength, long_factor);
      auto model = pe::trainer_from_checkpoint(c, checkpoint);
      std::vector<pe::LengthResult> at_lengths;
      for (auto L : e.lengths)
        at_lengths.push_back(pe::held_out_bits(model->model(), e.held_out, L, kScoredCharacters));
      json runs_json = json::array();
      for (const auto& result : at_lengths) runs_json.push_back(pe::length_result_json(result));
      e.summary["stretch"]["runs"][rule][seed] = runs_json;
      results[rule].push_back(at_lengths);
    }
  }
  // [stretch]
  std::string table = pe::length_table_header({"rule", "from"}, e.lengths, kTrainLength);
  pe::MeanRows rows;
  for (const std::string& rule : kStretchRules) {
    const pe::RowOverSeeds r = pe::row_over_seeds(results[rule], e.lengths, true);
    e.summary["stretch"]["means"][rule] = r.summary;
    const bool huggingface = rule == "llama3" || rule == "longrope";
    table += "| " + rule + " | " +
             (rule == "none" ? "5"
              : huggingface  ? "11"
                             : "8") +
             " |" + r.cells + "\n";
    rows.push_back({rule, r.means});
  }
  e.summary["tables"]["stretch"] = pe::split_lines(table);
  e.tables += "\nRoPE's charlm models stretched by s = " + pe::fixed_digits(kStretch, 0) +
              " without training: held-out bits per character, " + over_seeds(e) + "\n\n" + table;
  pe::plot_against_length(e.options.out + "/stretch_bits.png",
                          "RoPE on fortunes, trained at 32, stretched by s = 16 (" +
                              (e.seeds == 1 ? std::string("one seed")
                                            : "mean of " + std::to_string(e.seeds) + " seeds") +
                              ")",
                          "bits per character", rows, pe::length_figure_y_range(true, rows),
                          kTrainLength);
  std::string searched;
  for (const auto& [seed, record] : e.summary["longrope_search"].items())
    searched += "| " + seed + " | " + factors_text(record["factors"].get<std::vector<double>>()) +
                " | " + pe::fixed_digits(record["search_bits"].get<double>(), 3) + " |\n";
  e.tables +=
      "\nlongrope's searched long factors (fastest plane first) and their bits on "
      "training text at " +
      std::to_string(longest) + "\n\n| seed | long_factor | bits |\n|---|---|---|\n" + searched;
}

// The frequencies each rule gives the bench's heads (width 8, base 10000, s = 16, L0 = 32), and
// the attention factors: the numbers the stretch table's rows differ by.
void record_rule_frequencies(Experiment& e, std::int64_t head_width) {
  pe::HfRopeParameters p;
  p.rope_theta = 10000;
  p.head_dim = head_width;
  p.max_position_embeddings = kTrainLength;
  p.original_max_position_embeddings = kTrainLength;
  p.factor = kStretch;
  for (const char* type : {"default", "linear", "dynamic", "yarn", "llama3"}) {
    p.type = pe::hf_rope_type_from(type);
    if (type == std::string("llama3")) {
      p.low_freq_factor = kLowFreqFactor;
      p.high_freq_factor = kHighFreqFactor;
    }
    const pe::HfRopeFrequencies f = pe::hf_rope_frequencies(p, e.lengths.back());
    e.summary["rule_frequencies"][type] = {{"inv_freq", f.inv_freq},
                                           {"attention_factor", f.attention_factor}};
  }
  e.summary["rule_frequencies"]["longrope"]["attention_factor"] =
      pe::longrope_attention_factor(kStretch, kTrainLength);
}

void run(const pe::ChapterOptions& options) {
  const pe::FortunesSplit corpus = pe::split_fortunes_corpus(pe::kFortunesFolder);
  const std::string train_text = options.out + "/fortunes-train.txt";
  ag::write_file_atomically(train_text, corpus.train);
  const pe::CharVocabulary vocabulary(corpus.train);
  // longrope's search reads the last characters of the training text: text the model was
  // trained on, at a length it never saw, and never the held-out text the tables score.
  const std::size_t search_size = std::size_t(kSearchCharacters) + 1;
  ag::check(corpus.train.size() > search_size, "ch11_experiment", "the training text is too short");

  Experiment e{options,
               vocabulary.encode(corpus.held_out),
               vocabulary.encode(corpus.train.substr(corpus.train.size() - search_size)),
               options.fast ? pe::ch08::kFastLengths : pe::ch08::kLengths,
               options.fast ? 1 : pe::ch08::kSeeds,
               pe::experiment_summary()};
  const std::vector<TodaysRun> plan = plan_todays_runs(
      options.out, options.seed, e.seeds, options.steps, train_text, vocabulary.size());
  std::vector<pe::PlannedRun> planned;
  for (const TodaysRun& p : plan) planned.push_back(p.run);
  const std::vector<pe::FinishedRun> finished = pe::run_or_reuse(planned, options.run_list(2));

  const pe::TrainConfig& shape = plan.front().run.config;
  pe::record_bench_setup(e.summary, shape, e.lengths, e.seeds, options.fast);
  evaluate_runs(e, plan, finished);
  for (const std::string& task : pe::ch08::kTasks) write_task_table(e, task);
  write_stretch(e, plan, finished);
  record_rule_frequencies(e, shape.model.width / shape.model.heads);
  ag::write_file_atomically(options.out + "/tables.md", e.tables);
  std::printf("%s\ntables in %s/tables.md\n", e.tables.c_str(), options.out.c_str());
}

int main(int argc, char** argv) { return pe::run_bench_experiment(argc, argv, "11", kAbout, run); }
