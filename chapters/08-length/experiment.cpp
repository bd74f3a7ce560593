// Chapter 8's experiment: every encoding of the book trained at length 32 and evaluated,
// without retraining, at 32, 64, 128, 256 and 512, on ShiftK (the answer 4 tokens back), Copy
// (the answer half a sequence back) and a character language model on the fortunes corpus
// (bits per character on held-out text, several seeds). Beside the rows of 8 heads of width 8,
// the sinusoid, RoPE and ALiBi again with 2 heads of width 32 (the same width 64): does the
// width of a head decide how RoPE extrapolates? Then attention at 4x the training length, a
// probe of position in the NoPE models past their training length, and RoPE's scaling rules.
//
//   ch08_experiment [--steps N] [--seed S] [--out DIR] [--retrain]   (--help for more)
//
// Runs already finished in their folders with the same configuration are reused. The
// experiment writes <out>/summary.json and <out>/tables.md; the chapter quotes both.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ag/files.hpp"
#include "chapters/08-length/bench_experiment.hpp"
#include "chapters/08-length/context_extension.hpp"
#include "chapters/08-length/extrapolation.hpp"
#include "chapters/08-length/fortunes_corpus.hpp"
#include "chapters/08-length/length_plan.hpp"
#include "chapters/08-length/length_probe.hpp"
#include "chapters/08-length/length_tables.hpp"
#include "lab/chapter_options.hpp"
#include "lab/figures.hpp"
#include "lab/run.hpp"

using nlohmann::json;

using namespace pe::ch08;

constexpr const char* kAbout =
    "Chapter 8: every encoding trained at length 32 and evaluated at 32..512 on ShiftK, Copy "
    "and a character language model on the fortunes corpus.";

// Everything the steps of the experiment share: its options, the held-out text, the lengths
// and seeds, the summary the chapter quotes, the text of tables.md, and what the runs gave.
struct Experiment {
  const pe::ChapterOptions& options;
  std::vector<std::int64_t> held_out;  // the held-out fortunes, as token ids
  std::vector<std::int64_t> lengths;   // the evaluation lengths
  std::int64_t seeds = 1;
  json& summary;
  std::string tables = {};  // tables.md, section after section
  // The seed-1 model of each row, "task/rope-l2", for the figures, the probe and the scaling.
  std::map<std::string, std::unique_ptr<pe::Trainer>> seed1_models = {};
  // results[task][row name][s]: the row's results at every length, for seed s
  std::map<std::string, std::map<std::string, std::vector<std::vector<pe::LengthResult>>>> results =
      {};
};

// The model every row shares but for its depth and heads: a two-layer row's.
const pe::TrainConfig& row_shape(const std::vector<LengthRun>& plan) {
  const auto two_layers = std::find_if(plan.begin(), plan.end(), [](const LengthRun& p) {
    return p.variant.layers == 2 && p.variant.heads == kHeads;
  });
  ag::check(two_layers != plan.end(), "ch08", "the plan has no two-layer row");
  return two_layers->run.config;
}

void record_setup(Experiment& e, const pe::TrainConfig& shape, const pe::FortunesSplit& corpus,
                  const pe::CharVocabulary& vocabulary) {
  json& summary = e.summary;
  summary["train_length"] = kTrainLength;
  summary["lengths"] = e.lengths;
  summary["model"] = {{"width", shape.model.width},
                      {"heads", shape.model.heads},
                      {"ffn_width", shape.model.ffn_width},
                      {"batch", shape.batch},
                      {"lr", shape.lr},
                      {"layers", "2 (none: 1 and 8)"}};
  json head_width_rows = json::array();
  for (const Variant& v : kHeadWidthVariants) head_width_rows.push_back(v.encoding);
  summary["model"]["head_width_rows"] = {{"heads", kHeadWidthVariants.front().heads},
                                         {"head_width", kWidth / kHeadWidthVariants.front().heads},
                                         {"encodings", head_width_rows}};
  summary["seeds"] = e.seeds;
  summary["fast"] = e.options.fast;
  summary["corpus"] = {{"folder", pe::kFortunesFolder},
                       {"files", corpus.files},
                       {"fortunes", corpus.train_fortunes + corpus.held_out_fortunes},
                       {"train_fortunes", corpus.train_fortunes},
                       {"held_out_fortunes", corpus.held_out_fortunes},
                       {"train_characters", corpus.train.size()},
                       {"held_out_characters", corpus.held_out.size()},
                       {"duplicates_dropped", corpus.duplicates},
                       {"non_ascii_bytes_dropped", corpus.dropped_bytes},
                       {"vocabulary", vocabulary.size()},
                       {"scored_characters_per_length", kScoredCharacters}};
}

// Each finished run's model at every evaluation length.
void evaluate_runs(Experiment& e, const std::vector<LengthRun>& plan,
                   const std::vector<pe::FinishedRun>& finished) {
  const pe::ChapterOptions& options = e.options;
  const std::vector<std::int64_t>& lengths = e.lengths;
  const std::vector<std::int64_t>& held_out = e.held_out;
  json& summary = e.summary;
  auto& seed1_models = e.seed1_models;
  auto& results = e.results;
  // [evaluate-lengths]
  for (std::size_t r = 0; r < finished.size(); ++r) {
    const pe::TrainConfig& c = finished[r].config;
    const Variant& v = plan[r].variant;
    auto trainer = pe::Trainer::resume(finished[r].summary.out_dir + "/checkpoint.agt");
    const std::vector<pe::LengthResult> at_lengths =
        pe::evaluate_on_bench(*trainer, lengths, held_out, c.random_positions);
    json runs_json = json::array();
    for (const auto& result : at_lengths) runs_json.push_back(pe::length_result_json(result));
    summary["runs"][c.task][v.name]["seed " + std::to_string(c.seed)] = {
        {"train_seconds", finished[r].summary.train_seconds}, {"results", runs_json}};
    results[c.task][v.name].push_back(at_lengths);
    if (c.seed == options.seed) seed1_models[c.task + "/" + run_name(v)] = std::move(trainer);
  }
  // [evaluate-lengths]
}

// Whether a task is scored in bits per character (text) or in accuracy.
bool is_text(const std::string& task) { return task == std::string("charlm"); }

// One row of a task's table over the seeds: its cells (mean ± sd at every length), its means
// for the figure; the means also go into the summary.
std::pair<std::string, std::vector<pe::LengthResult>> row_means(Experiment& e,
                                                                const std::string& task,
                                                                const Variant& v) {
  pe::RowOverSeeds row = pe::row_over_seeds(e.results[task][v.name], e.lengths, is_text(task));
  for (auto& [length, mean] : row.summary.items()) e.summary["means"][task][v.name][length] = mean;
  return {row.cells, row.means};
}

// What a task's tables show, for tables.md: the metric, how much was scored, over which seeds.
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

std::string seeds_in_figure(const Experiment& e) {
  return e.seeds == 1 ? std::string("one seed") : "mean of " + std::to_string(e.seeds) + " seeds";
}

// A task's table and figure: the mean over the seeds at every length, and the spread when
// there are several seeds.
void write_task_table(Experiment& e, const std::string& task) {
  const bool text = is_text(task);
  std::string table = pe::length_table_header({"encoding"}, e.lengths, kTrainLength);
  pe::MeanRows means;
  for (const Variant& v : kVariants) {
    const auto [cells, row] = row_means(e, task, v);
    table += "| " + v.name + " |" + cells + "\n";
    means.push_back({v.name, row});
  }
  e.summary["tables"][task] = pe::split_lines(table);
  e.tables += "\n" + task + ": " + what_is_shown(e, task) + "\n\n" + table;
  const std::string title = text ? "fortunes: bits per character" : task + ": held-out accuracy";
  const std::string figure = text ? std::string("charlm_bits") : task + "_accuracy";
  pe::plot_against_length(e.options.out + "/" + figure + ".png",
                          title + ", trained at length 32 (" + seeds_in_figure(e) + ")",
                          text ? "bits per character" : "accuracy", means,
                          pe::length_figure_y_range(text, means), kTrainLength);
}

// The head-width table of a task: each row of kHeadWidthVariants under its row of 8 heads.
void write_head_width_table(Experiment& e, const std::string& task) {
  const bool text = is_text(task);
  const std::vector<std::int64_t>& lengths = e.lengths;
  auto row_of = [&](const Variant& v) { return row_means(e, task, v); };
  // [head-width]
  std::string heads_table =
      pe::length_table_header({"encoding", "heads × width"}, lengths, kTrainLength);
  pe::MeanRows head_means;
  for (const Variant& wide : kHeadWidthVariants) {
    for (const Variant& v : kVariants) {
      if (v.encoding != wide.encoding || v.layers != wide.layers) continue;
      for (const Variant& row : {v, wide}) {
        const auto [cells, means_of_row] = row_of(row);
        const std::string split =
            std::to_string(row.heads) + " × " + std::to_string(kWidth / row.heads);
        heads_table += "| " + row.encoding + " | " + split + " |" + cells + "\n";
        head_means.push_back({row.encoding + ", " + split, means_of_row});
      }
    }
  }
  // [head-width]
  e.summary["tables"]["heads_" + task] = pe::split_lines(heads_table);
  e.tables += "\n" + task + ", heads of width " + std::to_string(kWidth / kHeads) + " and " +
              std::to_string(kWidth / kHeadWidthVariants.front().heads) + " (width " +
              std::to_string(kWidth) + "): " + what_is_shown(e, task) + "\n\n" + heads_table;
  const std::string title = text ? "fortunes: bits per character" : task + ": held-out accuracy";
  const std::string figure = text ? std::string("charlm_bits") : task + "_accuracy";
  pe::plot_against_length(e.options.out + "/heads_" + figure + ".png",
                          title + ", heads of 8 and 32 (" + seeds_in_figure(e) + ")",
                          text ? "bits per character" : "accuracy", head_means,
                          pe::length_figure_y_range(text, head_means), kTrainLength);
}

// Attention at 4x the training length, on ShiftK.
void write_attention_figures(const Experiment& e) {
  for (const std::string name : {"rope-l2", "rope-l2-h2", "alibi-l2", "none-l1"}) {
    pe::write_attention_figure(*e.seed1_models.at("shiftk/" + name), 4 * kTrainLength,
                               e.options.out + "/attention_128_" + name + ".png");
  }
}

// Where the NoPE language models still know their position past length 32.
void write_nope_probe(Experiment& e) {
  json& summary = e.summary;
  e.tables += "\nNoPE charlm models: linear probe of the position at length " +
              std::to_string(4 * kTrainLength) +
              ", R^2 within each band of 32 positions (mean absolute error, in positions)\n\n";
  std::vector<pe::Series> probe_lines;
  for (const std::string name : {"none-l1", "none-l8"}) {
    const auto bands = pe::probe_position_bands(e.seed1_models.at("charlm/" + name)->model(),
                                                e.held_out, 4 * kTrainLength, kTrainLength);
    std::string table =
        "| " + name + ", layer | 0-31 (train) | 32-63 | 64-95 | 96-127 |\n|---|---|---|---|---|\n";
    for (std::size_t layer = 0; layer < bands.size(); ++layer) {
      table += "| " + std::to_string(layer) + " |";
      pe::Series s{name + ", layer " + std::to_string(layer), {}, {}};
      for (std::size_t b = 0; b < bands[layer].size(); ++b) {
        table.append(" ").append(pe::fixed_digits(bands[layer][b].r2, 2));
        table.append(" (").append(pe::fixed_digits(bands[layer][b].mae, 1)).append(") |");
        s.x.push_back(double(b * kTrainLength) + kTrainLength / 2.0);
        s.y.push_back(bands[layer][b].r2);
        summary["nope_probe"][name][std::to_string(layer)].push_back(
            {{"first", b * kTrainLength},
             {"r2", bands[layer][b].r2},
             {"mae", bands[layer][b].mae}});
      }
      table += "\n";
      if (layer + 1 == bands.size()) probe_lines.push_back(s);  // the last layer in the figure
    }
    summary["tables"]["probe_" + name] = pe::split_lines(table);
    e.tables += table + "\n";
  }
  pe::write_line_plot(e.options.out + "/nope_probe_bands.png", probe_lines,
                      "NoPE: probe R^2 within bands of 32 positions (last layer), length 128",
                      "middle of the band of positions", "R^2", false, std::make_pair(-30.0, 1.0));
}

// RoPE's scaling rules on the seed-1 RoPE language model, with and without a fine-tune.
void write_rope_scaling(Experiment& e) {
  const pe::ChapterOptions& options = e.options;
  const std::vector<std::int64_t>& held_out = e.held_out;
  json& summary = e.summary;
  // [rope-scaling]
  const pe::Trainer& rope = *e.seed1_models.at("charlm/rope-l2");
  const std::string rope_checkpoint =
      run_folder(options.out, "charlm", {"rope", "rope", 2}, options.seed) + "/checkpoint.agt";
  std::string header = "| rule | fine-tuned |", rule_line = "|---|---|";
  for (auto L : kScalingLengths) {
    header += " " + std::to_string(L) + (L == kTrainLength ? " (train)" : "") + " |";
    rule_line += "---|";
  }
  std::string table = header + "\n" + rule_line + "\n";
  std::vector<pe::Series> scaling_lines;
  for (const std::string& method : kScalings) {
    pe::TrainConfig c = rope.config();
    c.encoding_options = pe::rope_scaling_encoding_options(method, kScale, kTrainLength);
    pe::TrainConfig tune = c;  // a short fine-tune at 8 x the training length
    tune.length = std::int64_t(kScale) * kTrainLength;
    tune.batch = 2;  // 512 tokens a step: attention at 256 is what costs
    tune.steps = kFineTuneSteps;
    tune.warmup = 2;
    tune.lr = 1e-3;
    tune.eval_every = kFineTuneSteps;
    for (const bool fine_tune : {false, true}) {
      auto model = pe::trainer_from_checkpoint(fine_tune ? tune : c, rope_checkpoint);
      if (fine_tune) model->train();
      table += "| " + method + " | " + (fine_tune ? "yes" : "no") + " |";
      pe::Series s{method + (fine_tune ? ", fine-tuned" : ""), {}, {}};
      for (auto L : kScalingLengths) {
        const auto r = pe::held_out_bits(model->model(), held_out, L, kScoredCharacters);
        summary["rope_scaling"][method][fine_tune ? "fine-tuned" : "as trained"]
               [std::to_string(L)] = pe::length_result_json(r);
        table.append(" ").append(r.ran ? pe::fixed_digits(r.bits, 3)
                                       : pe::cannot_run_cell(r.error));
        table.append(" |");
        s.x.push_back(std::log2(double(L)));
        s.y.push_back(r.ran ? r.bits : std::nan(""));
      }
      table += "\n";
      scaling_lines.push_back(s);
    }
  }
  summary["tables"]["rope_scaling"] = pe::split_lines(table);
  e.tables += "\nRoPE charlm model (seed " + std::to_string(options.seed) +
              ") under each scaling rule for s = 8: held-out bits per character\n\n" + table;
  // [rope-scaling]
  double top = 4;
  for (const auto& line : scaling_lines)
    for (double y : line.y)
      if (std::isfinite(y)) top = std::max(top, y);
  top = std::ceil(top + 0.5);
  const double t = std::log2(double(kTrainLength));
  scaling_lines.push_back({"training length 32", {t, t}, {1.5, top}});
  pe::write_line_plot(options.out + "/rope_scaling_bits.png", scaling_lines,
                      "RoPE on fortunes, trained at 32, scaling rules for s = 8",
                      "log2 of the evaluation length (5 = 32, 8 = 256)", "bits per character",
                      false, std::make_pair(1.5, top));
}

void run(const pe::ChapterOptions& options) {
  // [corpus-split]
  const pe::FortunesSplit corpus = pe::split_fortunes_corpus(pe::kFortunesFolder);
  const std::string train_text = options.out + "/fortunes-train.txt";
  ag::write_file_atomically(train_text, corpus.train);
  ag::write_file_atomically(options.out + "/fortunes-held-out.txt", corpus.held_out);
  const pe::CharVocabulary vocabulary(corpus.train);
  const std::vector<std::int64_t> held_out = vocabulary.encode(corpus.held_out);
  // [corpus-split]
  std::printf(
      "corpus: %ld files of %s, %ld distinct fortunes (%ld duplicates dropped, %ld "
      "non-ASCII bytes dropped)\n  training: %ld fortunes, %zu characters; held out: "
      "%ld fortunes, %zu characters; vocabulary %ld\n",
      long(corpus.files), pe::kFortunesFolder,
      long(corpus.train_fortunes + corpus.held_out_fortunes), long(corpus.duplicates),
      long(corpus.dropped_bytes), long(corpus.train_fortunes), corpus.train.size(),
      long(corpus.held_out_fortunes), corpus.held_out.size(), long(vocabulary.size()));

  // Every training, in one list (length_plan.hpp). --fast keeps one seed.
  Experiment e{options, held_out, options.fast ? kFastLengths : kLengths, options.fast ? 1 : kSeeds,
               pe::experiment_summary()};
  const std::vector<LengthRun> plan = plan_length_runs(
      options.out, options.seed, e.seeds, options.steps, train_text, vocabulary.size());
  std::vector<pe::PlannedRun> planned;
  for (const LengthRun& p : plan) planned.push_back(p.run);
  const std::vector<pe::FinishedRun> finished = pe::run_or_reuse(planned, options.run_list(2));

  record_setup(e, row_shape(plan), corpus, vocabulary);
  evaluate_runs(e, plan, finished);
  for (const std::string& task : kTasks) {
    write_task_table(e, task);
    write_head_width_table(e, task);
  }
  write_attention_figures(e);
  write_nope_probe(e);
  write_rope_scaling(e);
  ag::write_file_atomically(options.out + "/tables.md", e.tables);
  std::printf("%s\ntables in %s/tables.md\n", e.tables.c_str(), options.out.c_str());
}

int main(int argc, char** argv) { return pe::run_bench_experiment(argc, argv, "08", kAbout, run); }
