// Chapter 10's experiment, on chapter 8's bench: CoPE and the forgetting gate beside NoPE, RoPE,
// ALiBi and FIRE, trained at length 32 on the three tasks where positions counted by content
// should matter (Flip-Flop, selective copy, counting) and on chapter 8's three (ShiftK, Copy, the
// fortunes character model), evaluated at 32 .. 512 and on Flip-Flop's sparse and dense test
// sets, three seeds; then what the trained gates do: which tokens each CoPE head counts, and
// which tokens make each forgetting-gate head forget.
//
//   ch10_experiment [--steps N] [--seed S] [--out DIR] [--retrain] [--fast]  (--help for more)
//
// Runs already finished in their folders with the same configuration are reused. The
// experiment writes <out>/summary.json and <out>/tables.md; the chapter quotes both.
#include <algorithm>
#include <cctype>
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
#include "chapters/10-content-positions/content_plan.hpp"
#include "chapters/10-content-positions/content_probe.hpp"
#include "chapters/10-content-positions/cope.hpp"
#include "lab/chapter_options.hpp"
#include "lab/figures.hpp"
#include "lab/run.hpp"
#include "lab/tasks.hpp"

using nlohmann::json;
using pe::ch08::kScoredCharacters;
using pe::ch08::kSyntheticTokens;
using pe::ch08::kTrainLength;
using namespace pe::ch10;

constexpr const char* kAbout =
    "Chapter 10: CoPE and the forgetting gate beside NoPE, RoPE, ALiBi and FIRE, trained at "
    "length 32 on Flip-Flop, selective copy, counting, ShiftK, Copy and the fortunes character "
    "model, evaluated at 32..512 and on Flip-Flop's sparse and dense test sets; what the trained "
    "gates count and forget.";

// The held-out sequences whose gates the probes average (at the training length).
constexpr std::int64_t kProbeSequences = 64;
// Held-out sequences of the content tasks at a length. Counting scores one token per sequence,
// and a sparse Flip-Flop sequence few more, so these tasks are measured by sequences, not by
// tokens as chapter 8's are (there 1,024 tokens at 512 would be two sequences): 8,192 tokens, and
// at least 64 sequences (256 at 32, 64 from 128 on).
constexpr std::int64_t kContentTokens = 8192;
constexpr std::int64_t kContentMinSequences = 64;
std::int64_t content_sequences(std::int64_t length) {
  return std::max(kContentMinSequences, kContentTokens / length);
}

bool is_content(const std::string& task) {
  return std::find(kContentTasks.begin(), kContentTasks.end(), task) != kContentTasks.end();
}

bool is_text(const std::string& task) { return task == std::string("charlm"); }

// Everything the steps of the experiment share.
struct Experiment {
  const pe::ChapterOptions& options;
  std::vector<std::int64_t> held_out;  // the held-out fortunes, as token ids
  std::vector<std::int64_t> lengths;   // the evaluation lengths
  std::int64_t seeds = 1;
  json& summary;
  std::string tables = {};
  // results[set][row][s]: the row's results at every length on a task or an out-of-distribution
  // set, for seed s
  std::map<std::string, std::map<std::string, std::vector<std::vector<pe::LengthResult>>>> results =
      {};
  // The seed-1 model of each row, by "task/row"
  std::map<std::string, std::unique_ptr<pe::Trainer>> seed1_models = {};
};

// The model on content_sequences(length) held-out sequences of a task (its own or a variant) at
// every length (an ag::Error at a length, such as a table too short, recorded as chapter 8
// records it).
std::vector<pe::LengthResult> evaluate_sequences(pe::Trainer& trainer, const pe::Task& task,
                                                 const std::vector<std::int64_t>& lengths) {
  std::vector<pe::LengthResult> results;
  for (const std::int64_t length : lengths) {
    try {
      const pe::Evaluation e = trainer.evaluate(task, length, content_sequences(length));
      results.push_back({length, true, e.accuracy, e.loss, e.loss / std::log(2.0), e.scored, {}});
    } catch (const ag::Error& error) {
      results.push_back(pe::refused_length(length, error));
    }
  }
  return results;
}

json results_json(const std::vector<pe::LengthResult>& results) {
  json out = json::array();
  for (const auto& result : results) out.push_back(pe::length_result_json(result));
  return out;
}

void evaluate_runs(Experiment& e, const std::vector<ContentRun>& plan,
                   const std::vector<pe::FinishedRun>& finished) {
  for (std::size_t r = 0; r < finished.size(); ++r) {
    const pe::TrainConfig& c = finished[r].config;
    const Row& row = plan[r].row;
    auto trainer = pe::Trainer::resume(finished[r].summary.out_dir + "/checkpoint.agt");
    const std::vector<pe::LengthResult> at_lengths =
        is_content(c.task) ? evaluate_sequences(*trainer, trainer->task(), e.lengths)
                           : pe::evaluate_on_bench(*trainer, e.lengths, e.held_out);
    const std::string seed = "seed " + std::to_string(c.seed);
    e.summary["runs"][c.task][row.name][seed] = {
        {"train_seconds", finished[r].summary.train_seconds},
        {"results", results_json(at_lengths)}};
    e.results[c.task][row.name].push_back(at_lengths);
    for (const OutOfDistribution& set : kOutOfDistribution) {
      if (set.task != c.task) continue;
      const auto variant = pe::make_task(set.task, set.options);
      const auto results = evaluate_sequences(*trainer, *variant, e.lengths);
      e.summary["runs"][set.name][row.name][seed] = {{"results", results_json(results)}};
      e.results[set.name][row.name].push_back(results);
    }
    if (c.seed == e.options.seed) e.seed1_models[c.task + "/" + row.name] = std::move(trainer);
  }
}

std::string what_is_shown(const Experiment& e, const std::string& set) {
  const std::string over =
      e.seeds == 1 ? "seed " + std::to_string(e.options.seed)
                   : "mean ± standard deviation over " + std::to_string(e.seeds) + " seeds";
  if (is_text(set))
    return "held-out bits per character (" + std::to_string(kScoredCharacters) +
           " characters at each length), " + over;
  if (std::find(kLengthTasks.begin(), kLengthTasks.end(), set) != kLengthTasks.end())
    return "held-out token accuracy (" + std::to_string(kSyntheticTokens) +
           " tokens at each length), " + over;
  return "held-out accuracy over the scored tokens of " + std::to_string(kContentTokens) +
         " tokens' worth of sequences at each length (at least " +
         std::to_string(kContentMinSequences) + " sequences), " + over;
}

// A file name for a set: "flipflop, sparse" -> "flipflop-sparse".
std::string file_name(const std::string& set) {
  std::string name;
  for (char c : set)
    if (std::isalnum(static_cast<unsigned char>(c)))
      name += c;
    else if (!name.empty() && name.back() != '-')
      name += '-';
  return name;
}

// The task (or out-of-distribution set) of a table, with its options.
std::unique_ptr<pe::Task> task_of(const std::string& set) {
  for (const OutOfDistribution& ood : kOutOfDistribution)
    if (ood.name == set) return pe::make_task(ood.task, ood.options);
  return pe::make_task(set);
}

// What answering without reading would score: at each length, the share of the scored targets of
// a run's held-out set (the same sequences its evaluation reads, for each seed) that equal the
// most frequent one. A bound on guessing from the answers' distribution alone.
std::vector<std::vector<pe::LengthResult>> most_frequent_answer(const Experiment& e,
                                                                const pe::Task& task) {
  std::vector<std::vector<pe::LengthResult>> seeds;
  for (std::int64_t s = 0; s < e.seeds; ++s) {
    std::vector<pe::LengthResult> at;
    for (const std::int64_t length : e.lengths) {
      const pe::Batch batch =
          task.held_out(content_sequences(length), length, e.options.seed + std::uint64_t(s));
      std::map<std::int64_t, std::int64_t> counts;
      std::int64_t scored = 0, most = 0;
      for (const std::int64_t target : batch.targets.values)
        if (target != pe::kIgnore) most = std::max(most, ++counts[target]), ++scored;
      at.push_back({length, true, double(most) / double(scored), 0, 0, scored, {}});
    }
    seeds.push_back(at);
  }
  return seeds;
}

// A task's (or an out-of-distribution set's) table and figure; the content tasks' tables end
// with the most frequent answer's share.
void write_table(Experiment& e, const std::string& set) {
  const bool text = is_text(set);
  std::string table = pe::length_table_header({"encoding", "chapter"}, e.lengths, kTrainLength);
  pe::MeanRows rows;
  for (const Row& row : kRows) {
    const pe::RowOverSeeds r = pe::row_over_seeds(e.results[set][row.name], e.lengths, text);
    e.summary["means"][set][row.name] = r.summary;
    table += "| " + row.name + " | " + row.chapter + " |" + r.cells + "\n";
    rows.push_back({row.name, r.means});
  }
  const bool content =
      std::find(kLengthTasks.begin(), kLengthTasks.end(), set) == kLengthTasks.end();
  if (content) {
    const pe::RowOverSeeds r =
        pe::row_over_seeds(most_frequent_answer(e, *task_of(set)), e.lengths, false);
    e.summary["means"][set]["most frequent answer"] = r.summary;
    table += "| most frequent answer | - |" + r.cells + "\n";
  }
  e.summary["tables"][set] = pe::split_lines(table);
  e.tables += "\n" + set + ": " + what_is_shown(e, set) + "\n\n" + table;
  const std::string seeds =
      e.seeds == 1 ? std::string("one seed") : "mean of " + std::to_string(e.seeds) + " seeds";
  const std::string title = text ? "fortunes: bits per character" : set + ": held-out accuracy";
  pe::plot_against_length(
      e.options.out + "/" + (text ? std::string("charlm_bits") : file_name(set) + "_accuracy") +
          ".png",
      title + ", trained at length 32 (" + seeds + ")", text ? "bits per character" : "accuracy",
      rows, pe::length_figure_y_range(text, rows), kTrainLength);
}

// The head of a layer whose mean values by token differ most (the one that most clearly picks
// tokens), and that spread.
std::pair<std::size_t, double> most_selective(const std::vector<std::vector<double>>& by_token) {
  std::pair<std::size_t, double> best{0, -1};
  for (std::size_t h = 0; h < by_token.size(); ++h) {
    double low = 1e300, high = -1e300;
    for (double v : by_token[h])
      if (std::isfinite(v)) low = std::min(low, v), high = std::max(high, v);
    if (high - low > best.second) best = {h, high - low};
  }
  return best;
}

// One table row per token: the chosen head's mean in each layer.
json by_token_json(const pe::Task& task, const std::vector<std::vector<double>>& by_token) {
  json heads = json::array();
  for (const auto& head : by_token) {
    json at = json::object();
    for (std::size_t v = 0; v < head.size(); ++v)
      at[task.token_text(std::int64_t(v))] = std::isfinite(head[v]) ? json(head[v]) : json(nullptr);
    heads.push_back(at);
  }
  return heads;
}

// The columns of a probe table: one per token that occurs, but the 26 letters (selective copy's)
// as one column "A..Z", whose value is their mean.
std::vector<std::pair<std::string, std::vector<std::int64_t>>> token_columns(
    const pe::Task& task, const ag::Indices& inputs) {
  std::vector<std::pair<std::string, std::vector<std::int64_t>>> columns;
  std::vector<std::int64_t> letters;
  for (std::int64_t v = 0; v < task.vocab_size(); ++v) {
    // only the tokens that occur as inputs (counting's values are only ever answers)
    if (std::find(inputs.values.begin(), inputs.values.end(), v) == inputs.values.end()) continue;
    const std::string text = task.token_text(v);
    if (text.size() == 1 && text[0] >= 'A' && text[0] <= 'Z')
      letters.push_back(v);
    else
      columns.push_back({text, {v}});
  }
  if (!letters.empty()) columns.insert(columns.begin(), {"A..Z", letters});
  return columns;
}

// The mean of a head's values over a column's tokens (those that occurred).
double column_mean(const std::vector<double>& head, const std::vector<std::int64_t>& tokens) {
  double sum = 0;
  int count = 0;
  for (std::int64_t v : tokens)
    if (std::isfinite(head[std::size_t(v)])) sum += head[std::size_t(v)], ++count;
  return count > 0 ? sum / count : std::nan("");
}

// What the trained gates do on each content task (seed 1): CoPE's mean gate by key token and the
// forgetting gate's mean kept share f by token, per head and layer; the most selective head of
// each layer in a table; and, for CoPE's most selective head of the last layer, its gates,
// positions and attention on one held-out sequence as heatmaps.
void write_probes(Experiment& e) {
  for (const std::string& task_name : kContentTasks) {
    const auto task = pe::make_task(task_name);
    const pe::Batch batch = task->held_out(kProbeSequences, kTrainLength, e.options.seed + 1000);
    const std::int64_t V = task->vocab_size();
    const auto columns = token_columns(*task, batch.inputs);
    std::string table = "| encoding | layer | head | spread |";
    std::string rule = "|---|---|---|---|";
    for (const auto& column : columns) {
      table += " " + column.first + " |";
      rule += "---|";
    }
    table += "\n" + rule + "\n";
    for (const std::string& name : {std::string("cope"), std::string("fox")}) {
      pe::Decoder& model = e.seed1_models.at(task_name + "/" + name)->model();
      for (std::int64_t layer = 0; layer < std::int64_t(model.blocks.size()); ++layer) {
        const auto by_token =
            name == "cope" ? pe::mean_gate_by_key_token(
                                 pe::cope_gates_of(model, batch.inputs, layer), batch.inputs, V)
                           : pe::mean_keep_by_token(pe::forget_logs_of(model, batch.inputs, layer),
                                                    batch.inputs, V);
        const auto [head, spread] = most_selective(by_token);
        e.summary["probes"][task_name][name]["layer " + std::to_string(layer + 1)] = {
            {"by_token", by_token_json(*task, by_token)},
            {"most_selective_head", head},
            {"spread", spread}};
        table += "| " + name + (name == "cope" ? " (gate g)" : " (kept f)") + " | " +
                 std::to_string(layer + 1) + " | " + std::to_string(head) + " | " +
                 pe::fixed_digits(spread, 2) + " |";
        for (const auto& column : columns) {
          const double v = column_mean(by_token[head], column.second);
          table.append(" ").append(std::isfinite(v) ? pe::fixed_digits(v, 2) : "-").append(" |");
        }
        table += "\n";
      }
    }
    e.summary["tables"]["probes " + task_name] = pe::split_lines(table);
    e.tables += "\n" + task_name + ", seed " + std::to_string(e.options.seed) +
                ": the most selective head of each layer, its mean by token\n\n" + table;
    // CoPE's most selective head of the last layer on the first held-out sequence.
    pe::Decoder& cope = e.seed1_models.at(task_name + "/cope")->model();
    const std::int64_t last = std::int64_t(cope.blocks.size()) - 1;
    const ag::Indices one{{batch.inputs.values.begin(), batch.inputs.values.begin() + kTrainLength},
                          {1, kTrainLength}};
    const auto head =
        std::int64_t(e.summary["probes"][task_name]["cope"]["layer " + std::to_string(last + 1)]
                              ["most_selective_head"]
                                  .get<std::size_t>());
    const ag::Tensor gates = pe::cope_gates_of(cope, one, last);
    const ag::Tensor positions = pe::cope_positions(gates);
    cope.capture_attention(true);
    {
      ag::NoGradGuard no_grad;
      cope.forward(one);
    }
    const ag::Tensor weights = cope.attention_weights()[std::size_t(last)];
    cope.capture_attention(false);
    std::string tokens;
    for (std::int64_t t = 0; t < kTrainLength; ++t)
      tokens.append(t > 0 ? " " : "").append(task->token_text(one.values[std::size_t(t)]));
    pe::Heatmap g = pe::heatmap_slice(gates, {0, head}, "gates g_ij");
    g.range = std::make_pair(0.0, 1.0);
    pe::Heatmap p = pe::heatmap_slice(positions, {0, head}, "positions p_ij");
    pe::Heatmap w = pe::heatmap_slice(weights, {0, head}, "attention weights");
    w.range = std::make_pair(0.0, 1.0);
    pe::write_heatmaps(e.options.out + "/cope_head_" + file_name(task_name) + ".png", {g, p, w},
                       "CoPE on " + task_name + ", layer " + std::to_string(last + 1) + ", head " +
                           std::to_string(head) + " (seed 1): " + tokens,
                       3);
    e.summary["cope_heatmap"][task_name] = {
        {"layer", last + 1}, {"head", head}, {"tokens", tokens}};
  }
}

void run(const pe::ChapterOptions& options) {
  const pe::FortunesSplit corpus = pe::split_fortunes_corpus(pe::kFortunesFolder);
  const std::string train_text = options.out + "/fortunes-train.txt";
  ag::write_file_atomically(train_text, corpus.train);
  const pe::CharVocabulary vocabulary(corpus.train);

  Experiment e{options, vocabulary.encode(corpus.held_out),
               options.fast ? pe::ch08::kFastLengths : pe::ch08::kLengths,
               options.fast ? 1 : pe::ch08::kSeeds, pe::experiment_summary()};
  const std::vector<ContentRun> plan = plan_content_runs(
      options.out, options.seed, e.seeds, options.steps, train_text, vocabulary.size());
  std::vector<pe::PlannedRun> planned;
  for (const ContentRun& p : plan) planned.push_back(p.run);
  const std::vector<pe::FinishedRun> finished = pe::run_or_reuse(planned, options.run_list(2));

  const pe::TrainConfig& shape = plan.front().run.config;
  pe::record_bench_setup(e.summary, shape, e.lengths, e.seeds, options.fast);
  evaluate_runs(e, plan, finished);
  for (const std::string& task : kContentTasks) write_table(e, task);
  for (const OutOfDistribution& set : kOutOfDistribution) write_table(e, set.name);
  for (const std::string& task : kLengthTasks) write_table(e, task);
  write_probes(e);
  ag::write_file_atomically(options.out + "/tables.md", e.tables);
  std::printf("%s\ntables in %s/tables.md\n", e.tables.c_str(), options.out.c_str());
}

int main(int argc, char** argv) { return pe::run_bench_experiment(argc, argv, "10", kAbout, run); }
