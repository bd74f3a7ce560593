// Chapter 4's experiment: what Shaw's pairwise tensors would cost as the sequence grows, Shaw's
// clipped index matrix and T5's buckets, then the reference model trained with shaw, xl and
// t5 on ShiftK and AlternatingChar, and the T5 biases it learned.
//
//   ch04_experiment [--steps N] [--seed S] [--out DIR] [--retrain]   (--help for more)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <string>
#include <utility>

#include "ag/tensor_bytes.hpp"
#include "chapters/01-attention/encoding_registry.hpp"
#include "chapters/04-relative/relative_encodings.hpp"
#include "lab/chapter_options.hpp"
#include "lab/chapter_registry.hpp"
#include "lab/figures.hpp"
#include "lab/reference_runs.hpp"

using ag::Tensor;

namespace {

// [memory-measure]
struct ForwardCost {
  double ms;           // the fastest of a few passes
  double tensors_mib;  // the most tensor memory alive at once during a pass, beyond the model
};

// A few forward passes (no gradients) of the reference model (C = 256, one head, one layer) over
// one sequence of `length` tokens: the fastest time, and the peak of live tensor memory.
ForwardCost forward_cost(const std::string& encoding, std::int64_t length,
                         std::map<std::string, std::string> options = {}) {
  pe::EncodingSpec spec;
  spec.max_length = length;
  spec.options = std::move(options);
  ag::Rng rng(1);
  pe::Decoder model(spec.model, pe::make_encoding(encoding, spec, rng), rng);
  ag::Indices ids{std::vector<std::int64_t>(static_cast<std::size_t>(length)), {1, length}};
  for (std::int64_t t = 0; t < length; ++t) ids.values[t] = (t * 7) % spec.model.vocab;
  ag::NoGradGuard no_grad;
  ForwardCost best{1e30, 0};
  for (int repeat = 0; repeat < 3; ++repeat) {
    const std::int64_t before = ag::tensor_bytes().live;  // the model's parameters
    ag::reset_peak_tensor_bytes();
    const auto start = std::chrono::steady_clock::now();
    const Tensor logits = model.forward(ids);
    const std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - start;
    best.ms = std::min(best.ms, took.count());
    best.tensors_mib =
        std::max(best.tensors_mib, double(ag::tensor_bytes().peak - before) / (1024.0 * 1024.0));
  }
  return best;
}
// [memory-measure]

// Forward time and tensor memory of every encoding, with Shaw both ways: the lean terms the
// model uses and the pairwise tensors [T, T, D] of the formula as written (-o pairwise=true).
void memory_experiment(const std::string& dir) {
  const std::int64_t D = 256;
  const std::vector<std::int64_t> lengths{32, 64, 128, 256, 512, 1024};
  const std::vector<std::string> labels{"none", "t5", "xl", "shaw", "shaw pairwise"};
  std::vector<pe::Series> times, memory;
  for (const auto& label : labels) times.push_back({label, {}, {}});
  for (const std::string label : {"none", "shaw", "shaw pairwise"})
    memory.push_back({label, {}, {}});
  // the row of labels (and of cost below) that each memory series plots
  std::vector<std::size_t> memory_row;
  for (const auto& series : memory)
    memory_row.push_back(
        std::size_t(std::find(labels.begin(), labels.end(), series.label) - labels.begin()));
  std::printf(
      "Forward pass of one sequence (C = D = 256, 1 layer): time, and the most tensor\n"
      "memory alive at once; Shaw's lean terms against its pairwise tensors:\n");
  std::printf("%6s %12s %9s %9s %9s %9s %10s %12s %12s %14s\n", "T", "[T,T,D] MiB", "none ms",
              "t5 ms", "xl ms", "shaw ms", "pairw. ms", "none MiB", "shaw MiB", "pairwise MiB");
  for (std::int64_t T : lengths) {
    // the size of one real pairwise tensor, not a formula
    const Tensor pairwise = ag::embedding(ag::zeros({33, D}), pe::shaw_clipped_index(T, T, 0, 16));
    const double pairwise_mib = double(pairwise.numel()) * sizeof(float) / (1024.0 * 1024.0);
    std::vector<ForwardCost> cost;
    for (const auto& label : labels)
      cost.push_back(label == "shaw pairwise" ? forward_cost("shaw", T, {{"pairwise", "true"}})
                                              : forward_cost(label, T));
    for (std::size_t e = 0; e < labels.size(); ++e) {
      times[e].x.push_back(double(T));
      times[e].y.push_back(cost[e].ms);
    }
    for (std::size_t m = 0; m < memory.size(); ++m) {
      memory[m].x.push_back(double(T));
      memory[m].y.push_back(cost[memory_row[m]].tensors_mib);
    }
    std::printf("%6ld %12.1f %9.2f %9.2f %9.2f %9.2f %10.2f %12.2f %12.2f %14.2f\n", long(T),
                pairwise_mib, cost[0].ms, cost[1].ms, cost[2].ms, cost[3].ms, cost[4].ms,
                cost[0].tensors_mib, cost[3].tensors_mib, cost[4].tensors_mib);
  }
  pe::write_line_plot(dir + "/shaw_memory.png", memory,
                      "Most tensor memory alive during a forward pass, C = D = 256", "length T",
                      "MiB (log scale)", true);
  pe::write_line_plot(dir + "/forward_time.png", times,
                      "Forward pass of the reference model, one sequence, no gradients", "length T",
                      "milliseconds (log scale)", true);
}

void index_and_bucket_figure(const std::string& path) {
  const std::int64_t T = 40;
  const ag::Indices index = pe::shaw_clipped_index(T, T, 0, 16);
  const ag::Indices buckets = pe::t5_bucket_matrix(T, T, 0, {});
  pe::Heatmap shaw, t5;
  shaw.values.assign(index.values.begin(), index.values.end());
  t5.values.assign(buckets.values.begin(), buckets.values.end());
  shaw.rows = shaw.cols = t5.rows = t5.cols = T;
  shaw.title = "Shaw: clip(j - i, -16, 16) + 16";
  t5.title = "T5: bucket(j - i), 32 buckets, causal";
  pe::write_heatmaps(path, {shaw, t5}, "Which learned row each (query, key) pair uses, T = 40", 2);
}

// [t5-learned]
// The learned T5 bias of a trained run against the distance n = i - j: the last row of the
// [H, L, L] bias (query L-1, keys L-1-n), head 0.
pe::Series learned_t5_bias(const std::string& run_dir, const std::string& label) {
  const auto trainer = pe::Trainer::resume(run_dir + "/checkpoint.agt");
  const std::int64_t L = 160;
  Tensor bias;
  for (const auto& [name, value] : trainer->model().encoding->inspect(L))
    if (name == "bias") bias = value;
  pe::Series s{label, {}, {}};
  for (std::int64_t n = 0; n < L; ++n) {
    s.x.push_back(double(n));
    s.y.push_back(bias.at({0, L - 1, L - 1 - n}));
  }
  return s;
}
// [t5-learned]

}  // namespace

// What --help says.
constexpr const char* kAbout =
    "Chapter 4: Shaw's terms with and without pairwise tensors, Shaw's index and T5's buckets, "
    "then the reference model trained with shaw, xl and t5.";

void run(const pe::ChapterOptions& options) {
  index_and_bucket_figure(options.out + "/index_and_buckets.png");
  memory_experiment(options.out);

  std::vector<pe::PlannedRun> planned;  // folders named <encoding>_<task>
  for (const std::string encoding : {"shaw", "xl", "t5"})
    for (const std::string task : {"shiftk", "alternating"})
      planned.push_back({pe::reference_config(encoding, task, options),
                         options.out + "/" + encoding + "_" + task});
  const auto runs = pe::run_or_reuse(planned, options.run_list());
  std::printf("\nheld-out token accuracy (256 sequences of 32), reference model:\n");
  std::vector<pe::Series> t5_curves;
  for (const auto& run : runs) {
    std::printf("%s\n", pe::result_line(run).c_str());
    pe::record_summary_run(run.config.encoding + "_" + run.config.task, run);
    if (run.config.encoding == "t5")
      t5_curves.push_back(learned_t5_bias(run.summary.out_dir, "trained on " + run.config.task));
  }

  pe::write_line_plot(options.out + "/t5_learned_bias.png", t5_curves,
                      "T5 bias learned by the reference model (head 0); training saw n <= 31",
                      "distance n = i - j", "bias added to the score");
  for (const auto& curve : t5_curves) {
    std::printf("learned T5 bias, %s, at n = 0..8:", curve.label.c_str());
    for (int n = 0; n <= 8; ++n) std::printf(" %.2f", curve.y[n]);
    std::printf("; n = 16, 31, 64, 128: %.2f %.2f %.2f %.2f\n", curve.y[16], curve.y[31],
                curve.y[64], curve.y[128]);
  }
  std::printf("figures and runs in %s/\n", options.out.c_str());
}

int main(int argc, char** argv) {
  return pe::run_chapter_experiment(argc, argv, "ch04_experiment", kAbout, {.out = "results/ch04"},
                                    run);
}
