// Chapter 12's experiment: positions at inference. Character models of chapter 8's bench
// (RoPE, ALiBi and no encoding, trained at length 32 on the fortunes, with and without one
// learned sink logit per head) read held-out streams 50 times their training length through a
// window cache: everything kept, a window of 32, 4 sinks and a window of 28 (at their places in
// the cache, or at their original positions), and the sink-logit models with a window. Then
// DeepSeek's latent attention with decoupled RoPE on the reference tasks, and the cache bytes
// per token of each kind of attention.
//
//   ch12_experiment [--steps N] [--seed S] [--out DIR] [--retrain] [--fast]  (--help for more)
//
// Runs already finished in their folders with the same configuration are reused. The
// experiment writes <out>/summary.json and <out>/tables.md; the chapter quotes both.
#include <algorithm>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ag/files.hpp"
#include "ag/tensor.hpp"
#include "chapters/08-length/bench_experiment.hpp"
#include "chapters/08-length/extrapolation.hpp"
#include "chapters/08-length/fortunes_corpus.hpp"
#include "chapters/08-length/length_tables.hpp"
#include "chapters/12-inference/cache_memory.hpp"
#include "chapters/12-inference/latent_training.hpp"
#include "chapters/12-inference/stream_plan.hpp"
#include "chapters/12-inference/window_cache.hpp"
#include "lab/chapter_options.hpp"
#include "lab/figures.hpp"
#include "lab/run.hpp"

using nlohmann::json;
using namespace pe::ch12;

constexpr const char* kAbout =
    "Chapter 12: character models (RoPE, ALiBi, none; with and without learned sink logits) "
    "read held-out streams 50 times their training length through a window cache with and "
    "without attention sinks; DeepSeek's latent attention with decoupled RoPE; cache bytes per "
    "token.";

// Everything the steps of the experiment share.
struct Experiment {
  const pe::ChapterOptions& options;
  std::vector<std::int64_t> held_out;  // the held-out fortunes, as token ids
  std::int64_t seeds = 1;
  std::int64_t streams = kStreams;  // --fast reads one
  json& summary;
  std::string tables = {};
  // bits[encoding][reading][seed]: the bits of every prediction, the streams one after another
  std::map<std::string, std::map<std::string, std::vector<std::vector<double>>>> bits = {};
};

// How much attention the queries past the first 8 positions of a training-length window put on
// its first token, and (for sink-logit models) on the sink: the mean over layers, heads,
// queries and windows. StreamingLLM's explanation of the collapse is that models park their
// spare attention on the first tokens.
json attention_on_first(pe::Decoder& model, const std::vector<std::int64_t>& held_out) {
  constexpr std::int64_t kWindows = 16, kFrom = 8;
  const std::int64_t T = pe::ch08::kTrainLength;
  double first = 0, sink = 0, count = 0;
  ag::NoGradGuard no_grad;
  model.capture_attention(true);
  for (std::int64_t w = 0; w < kWindows; ++w) {
    const std::vector<std::int64_t> ids(held_out.begin() + w * T, held_out.begin() + (w + 1) * T);
    model.forward(ag::Indices{ids, {1, T}});
    for (const ag::Tensor& weights : model.attention_weights()) {  // [1, H, T, T]
      const std::vector<double> v = weights.to_vector();
      const std::int64_t H = weights.size(1);
      for (std::int64_t h = 0; h < H; ++h)
        for (std::int64_t i = kFrom; i < T; ++i) {
          const double* row = v.data() + (h * T + i) * T;
          double total = 0;
          for (std::int64_t j = 0; j <= i; ++j) total += row[j];
          first += row[0];
          sink += 1 - total;
          count += 1;
        }
    }
  }
  model.capture_attention(false);
  return {{"first_token", first / count}, {"sink", sink / count}};
}

void read_streams(Experiment& e, const std::vector<StreamRun>& plan,
                  const std::vector<pe::FinishedRun>& finished) {
  for (std::size_t r = 0; r < finished.size(); ++r) {
    const StreamRun& run = plan[r];
    auto trainer = pe::Trainer::resume(finished[r].summary.out_dir + "/checkpoint.agt");
    const std::string seed = "seed " + std::to_string(finished[r].config.seed);
    json& record = e.summary["runs"][model_name(run.encoding, run.learned_sinks)][seed];
    record["train_seconds"] = finished[r].summary.train_seconds;
    record["attention"] = attention_on_first(trainer->model(), e.held_out);
    for (const Reading& reading : kReadings) {
      if (reading.learned_sinks != run.learned_sinks) continue;
      std::vector<double> bits;
      for (std::int64_t s = 0; s < e.streams; ++s) {
        const auto begin = e.held_out.begin() + s * kStreamLength;
        const std::vector<double> b =
            pe::stream_bits(trainer->model(), {begin, begin + kStreamLength}, reading.window);
        bits.insert(bits.end(), b.begin(), b.end());
      }
      e.bits[run.encoding][reading.name].push_back(bits);
    }
  }
}

// The bits of one stream's predictions, averaged over the streams: [kStreamLength - 1].
std::vector<double> mean_over_streams(const std::vector<double>& bits) {
  const std::int64_t n = kStreamLength - 1;
  const std::int64_t streams = std::int64_t(bits.size()) / n;
  std::vector<double> mean(static_cast<std::size_t>(n), 0.0);
  for (std::int64_t s = 0; s < streams; ++s)
    for (std::int64_t i = 0; i < n; ++i) mean[i] += bits[s * n + i] / double(streams);
  return mean;
}

std::string over_seeds(const Experiment& e) {
  return e.seeds == 1 ? "seed " + std::to_string(e.options.seed)
                      : "mean ± standard deviation over " + std::to_string(e.seeds) + " seeds";
}

void write_stream_table(Experiment& e) {
  std::string table = "| encoding | reading |";
  std::string rule = "|---|---|";
  for (const Stretch& s : kStretches) {
    table += " " + std::to_string(s.begin) + "–" + std::to_string(s.end - 1) + " |";
    rule += "---|";
  }
  table += "\n" + rule + "\n";
  for (const std::string& encoding : kEncodings) {
    std::vector<pe::Series> curves;
    for (const Reading& reading : kReadings) {
      const auto& seeds = e.bits[encoding][reading.name];
      table += "| " + encoding + " | " + reading.name + " |";
      std::vector<double> per_position(static_cast<std::size_t>(kStreamLength - 1), 0.0);
      for (const Stretch& stretch : kStretches) {
        std::vector<double> values;
        for (const auto& bits : seeds)
          values.push_back(stretch_mean(mean_over_streams(bits), stretch));
        const auto [mean, sd] = pe::mean_and_sd(values);
        // appended piece by piece: g++ 12 warns (-Wrestrict) on " " + a temporary string
        table.append(" ").append(pe::fixed_digits(mean, 3));
        if (seeds.size() > 1) table.append(" ± ").append(pe::fixed_digits(sd, 3));
        table.append(" |");
        const std::string key =
            std::to_string(stretch.begin) + "-" + std::to_string(stretch.end - 1);
        e.summary["means"][encoding][reading.name][key] = {
            {"bits", mean}, {"sd", sd}, {"seeds", values.size()}};
      }
      table += "\n";
      for (const auto& bits : seeds) {
        const std::vector<double> m = mean_over_streams(bits);
        for (std::size_t i = 0; i < m.size(); ++i) per_position[i] += m[i] / double(seeds.size());
      }
      const auto [x, y] = smoothed(per_position, kSmoothing);
      curves.push_back({reading.name, x, y});
      e.summary["curves"][encoding][reading.name] = {{"x", x}, {"bits", y}};
    }
    pe::write_line_plot(e.options.out + "/stream_" + encoding + ".png", curves,
                        encoding + " along a held-out stream (trained at 32)",
                        "position in the stream", "bits per character (mean of 32 positions)",
                        false, std::pair<double, double>{2.0, 7.0});
  }
  e.summary["tables"]["stream"] = pe::split_lines(table);
  e.tables += "\nStreams of " + std::to_string(kStreamLength) + " held-out characters (" +
              std::to_string(e.streams) +
              " per model), bits per character over stretches of "
              "positions, " +
              over_seeds(e) + "\n\n" + table;

  std::string attention =
      "| model | weight on the first token | weight on the sink |\n|---|---|---|\n";
  for (const std::string& encoding : kEncodings)
    for (const bool sinks : {false, true}) {
      const std::string name = model_name(encoding, sinks);
      std::vector<double> first, sink;
      for (const auto& [seed, record] : e.summary["runs"][name].items()) {
        first.push_back(record["attention"]["first_token"].get<double>());
        sink.push_back(record["attention"]["sink"].get<double>());
      }
      const double f = pe::mean_and_sd(first).first, s = pe::mean_and_sd(sink).first;
      e.summary["attention"][name] = {{"first_token", f}, {"sink", s}};
      attention += "| " + name + " | " + pe::fixed_digits(f, 3) + " | " +
                   (sinks ? pe::fixed_digits(s, 3) : std::string("–")) + " |\n";
    }
  e.summary["tables"]["attention"] = pe::split_lines(attention);
  e.tables +=
      "\nWhere the attention goes: queries at positions 8..31 of 16 held-out windows "
      "of 32, mean over layers, heads and seeds\n\n" +
      attention;
}

// DeepSeek's latent attention with decoupled RoPE on the book's reference tasks (ShiftK with
// k = 4 and AlternatingChar), every seed: held-out accuracy, and how far decoding through the
// latent cache (absorbed) strays from the full pass. Then the cache bytes per token.
void write_latent(Experiment& e) {
  const std::vector<std::string> tasks = {"shiftk", "alternating"};
  std::string table =
      "| task | held-out accuracy | held-out loss | cached − full, largest logit difference |\n"
      "|---|---|---|---|\n";
  for (const std::string& task : tasks) {
    std::vector<double> accuracy, loss;
    double difference = 0;
    for (std::int64_t s = 0; s < e.seeds; ++s) {
      const std::uint64_t seed = e.options.seed + std::uint64_t(s);
      const pe::LatentResult r = pe::train_latent_model(task, e.options.steps, seed);
      e.summary["latent"]["runs"][task]["seed " + std::to_string(seed)] = {
          {"accuracy", r.accuracy},
          {"held_out_loss", r.held_out_loss},
          {"first_loss", r.first_loss},
          {"final_loss", r.final_loss},
          {"seconds", r.seconds},
          {"parameters", r.parameters},
          {"cached_decoding_difference", r.cached_decoding_difference}};
      e.summary["latent"]["parameters"] = r.parameters;
      accuracy.push_back(r.accuracy);
      loss.push_back(r.held_out_loss);
      difference = std::max(difference, r.cached_decoding_difference);
    }
    const auto [a, a_sd] = pe::mean_and_sd(accuracy);
    const auto [l, l_sd] = pe::mean_and_sd(loss);
    e.summary["latent"]["means"][task] = {{"accuracy", a},
                                          {"sd", a_sd},
                                          {"held_out_loss", l},
                                          {"cached_decoding_difference", difference}};
    char cell[64];
    std::snprintf(cell, sizeof cell, "%.1e", difference);
    table.append("| ").append(task).append(" | ").append(pe::fixed_digits(a, 4));
    if (e.seeds > 1) table.append(" ± ").append(pe::fixed_digits(a_sd, 4));
    table.append(" | ").append(pe::fixed_digits(l, 4)).append(" | ").append(cell).append(" |\n");
  }
  e.summary["tables"]["latent"] = pe::split_lines(table);
  e.tables += "\nLatent attention (d_c = 16, d_R = 8, 8 heads of 8, one layer), " +
              std::to_string(e.options.steps) + " steps at length 32, " + over_seeds(e) + "\n\n" +
              table;

  const std::vector<pe::CacheBytesRow> rows = pe::cache_bytes_table();
  const std::string bytes = pe::cache_bytes_markdown(rows);
  for (const pe::CacheBytesRow& row : rows)
    e.summary["cache_bytes"][row.model + ", " + row.attention] = {
        {"elements_per_token", row.elements_per_token},
        {"bytes_per_token", row.bytes_per_token},
        {"measured_bytes_per_token", row.measured_bytes_per_token}};
  e.summary["tables"]["cache_bytes"] = pe::split_lines(bytes);
  e.tables += "\nCache bytes per token\n\n" + bytes;
}

void run(const pe::ChapterOptions& options) {
  const pe::FortunesSplit corpus = pe::split_fortunes_corpus(pe::kFortunesFolder);
  const std::string train_text = options.out + "/fortunes-train.txt";
  ag::write_file_atomically(train_text, corpus.train);
  const pe::CharVocabulary vocabulary(corpus.train);
  Experiment e{options, vocabulary.encode(corpus.held_out), options.fast ? 1 : pe::ch08::kSeeds,
               options.fast ? 1 : kStreams, pe::experiment_summary()};
  ag::check(std::int64_t(e.held_out.size()) >= kStreams * kStreamLength, "ch12_experiment",
            "the held-out text has ", e.held_out.size(), " characters, fewer than ",
            kStreams * kStreamLength);
  const std::vector<StreamRun> plan = plan_stream_runs(
      options.out, options.seed, e.seeds, options.steps, train_text, vocabulary.size());
  std::vector<pe::PlannedRun> planned;
  for (const StreamRun& p : plan) planned.push_back(p.run);
  const std::vector<pe::FinishedRun> finished = pe::run_or_reuse(planned, options.run_list(2));

  pe::record_bench_setup(e.summary, plan.front().run.config, {pe::ch08::kTrainLength}, e.seeds,
                         options.fast);
  e.summary["stream_length"] = kStreamLength;
  e.summary["streams"] = e.streams;
  read_streams(e, plan, finished);
  write_stream_table(e);
  write_latent(e);
  ag::write_file_atomically(options.out + "/tables.md", e.tables);
  std::printf("%s\ntables in %s/tables.md\n", e.tables.c_str(), options.out.c_str());
}

int main(int argc, char** argv) { return pe::run_bench_experiment(argc, argv, "12", kAbout, run); }
