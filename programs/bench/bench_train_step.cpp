// One training step of the reference model (1 layer, 1 head, width 256, feed-forward 1024,
// batch 64, length 32): forward, backward and an AdamW step, timed with 1 and 2 threads. The
// step is taken as the trainer takes it, in micro-batches (ag/micro_batches.hpp: 4 here, each
// on a thread of its own); with 2 threads it is also timed the other way, the whole batch in
// one pass with each op split between the threads. --micro-batches N chooses another count.
// --layers and --heads change the model (the 8-layer NoPE run: --layers 8); --profile also
// prints where the time of the steps at 1 thread went, op by op (ag/profile.hpp).
//
// "Of the limit": the step's matmul FLOPs over what the machine's fused multiply-adds could do
// in the same time, measured first in this process (peak_fma.cpp: a register-only FMA loop on
// the SIMD path the kernels chose; at 2 threads, twice the one-thread peak). 1.0 would spend
// every cycle of every thread on useful multiply-adds.
//
// --summary FILE writes what it printed and its numbers by name, as JSON (written whole), for
// the text that quotes them (appendix A: chapters/A-performance/results/train_step.json):
// peak.{isa,gflops}, step_gflop, threads.<N>.{ms,gflops,of_limit} (and threads.2.speedup, the
// one-thread time over the two-thread time), micro_batches, threads.2.ops_split.{ms,gflops,
// of_limit,speedup} (the whole batch in one pass, each op split),
// allocations.{buffers,buffer_bytes,heap,heap_bytes} (per step at 1 thread, once the steps before
// made the buffers; allocations.two_threads the same at 2), peak_memory_mb, machine (the CPU, and
// the load average as it started), and with --profile the profile:
// profile.ops.<op>.<phase>.{calls,ms,ms_per_step,share}, profile.by_op.<op>.{ms,share} (its
// phases together), profile.outside, profile.wall_ms, profile.gemm.{share,ms_per_step,gflops,
// of_peak,headroom} (the matrix products' part of the wall time, their speed inside the step,
// and the peak over that speed: what a second thread on the same FMA units could gain at most)
// and profile.other_share (everything else), and profile.products.<kind>.{calls,gflop_per_step,
// ms_per_step,gflops,of_peak}: the gemm kernel's calls from the ops by kind of product (xW,
// dYWt, XtdY: the forward, dX = dY W^T and dW = X^T dY), timed around each call. Shares are
// fractions of the profile's wall time.
//
//   bench_train_step [--steps N] [--layers L] [--heads H] [--micro-batches N] [--profile]
//                    [--summary FILE]
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "ag/buffers.hpp"
#include "ag/files.hpp"
#include "ag/kernels/dispatch.hpp"
#include "ag/micro_batches.hpp"
#include "ag/optim.hpp"
#include "ag/profile.hpp"
#include "ag/threads.hpp"
#include "base/build_record.hpp"
#include "base/command_line.hpp"
#include "base/program_frame.hpp"
#include "base/stdout_capture.hpp"
#include "chapters/01-attention/decoder.hpp"
#include "programs/bench/count_allocations.hpp"
#include "programs/bench/peak_fma.hpp"

namespace {

ag::Indices random_ids(ag::Rng& rng, std::int64_t B, std::int64_t T, std::int64_t V) {
  ag::Indices ids{std::vector<std::int64_t>(B * T), {B, T}};
  for (auto& id : ids.values) id = rng.randint(0, V);
  return ids;
}

// A step's letters and the letters to predict, both [B, T], fresh from the generator.
struct Batch {
  ag::Indices ids, targets;
};
Batch random_batch(ag::Rng& rng, std::int64_t B, std::int64_t T, std::int64_t V) {
  Batch batch{random_ids(rng, B, T, V), {}};
  batch.targets = random_ids(rng, B, T, V);
  return batch;
}

// Matmul FLOPs of one step: each product costs 2MNK forward and twice that backward.
double step_flops(const pe::DecoderConfig& c, std::int64_t B, std::int64_t T) {
  const double rows = double(B) * T;
  double forward = 2 * rows * c.width * c.vocab;                  // head
  forward += c.layers * (4 * 2 * rows * c.width * c.width         // q, k, v, output
                         + 2 * 2 * rows * c.width * c.ffn_width   // expand, contract
                         + 2 * 2 * double(B) * T * T * c.width);  // scores, weights @ v
  return 3 * forward;
}

// One step as the trainer takes it (lab/trainer.cpp): the batch in `pieces` micro-batches
// (ag/micro_batches.hpp), each on a thread of its own when there are threads; pieces = 1 is the
// whole batch in one pass, its ops split between the threads.
double step(pe::Decoder& model, ag::AdamW& optimizer, const Batch& batch, std::int64_t pieces,
            std::int64_t V) {
  const std::int64_t B = batch.ids.shape[0];
  optimizer.zero_grad();
  const double loss = ag::accumulate_micro_batches(pieces, [&](std::int64_t i) {
    const ag::MicroBatchRows rows = ag::micro_batch_rows(B, pieces, i);
    ag::Indices y = ag::rows_of(batch.targets, rows);
    const std::int64_t n = static_cast<std::int64_t>(y.values.size());
    y.shape = {n};  // one target per row of the logits
    ag::Tensor logits = model.forward(ag::rows_of(batch.ids, rows));
    return ag::WeightedLoss{ag::cross_entropy(ag::reshape(logits, {n, V}), y),
                            double(rows.end - rows.first) / double(B)};
  });
  optimizer.step();
  return loss;
}

double median_ms(pe::Decoder& model, ag::AdamW& optimizer, ag::Rng& rng, int steps,
                 const pe::DecoderConfig& config, std::int64_t B, std::int64_t T,
                 std::int64_t pieces) {
  std::vector<double> times;
  for (int s = 0; s < steps + 2; ++s) {
    const Batch batch = random_batch(rng, B, T, config.vocab);
    const auto start = std::chrono::steady_clock::now();
    step(model, optimizer, batch, pieces, config.vocab);
    const auto end = std::chrono::steady_clock::now();
    if (s >= 2) times.push_back(std::chrono::duration<double, std::milli>(end - start).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

// What one training step (step(), in its micro-batches) allocates once the steps before it made
// its tensors' buffers, at `threads` threads: tensor buffers the cache had none for
// (ag/buffers.hpp), and calls of operator new (count_allocations.hpp: tensor handles, tape
// nodes, shapes, the engine's bookkeeping). Each step is counted from its start to its end, its
// batch made outside.
nlohmann::json allocations_per_step(pe::Decoder& model, ag::AdamW& optimizer, ag::Rng& rng,
                                    const pe::DecoderConfig& config, std::int64_t B, std::int64_t T,
                                    std::int64_t pieces, int threads, int timed_steps) {
  ag::set_max_threads(threads);
  // The first steps are not counted: their buffers are new, and at 2 threads the two
  // micro-batches running at once may need a few more of one size before the cache holds enough.
  // As many steps as --steps asks for, up to 10 of each.
  const int warm_up = std::min(10, timed_steps), steps = std::min(10, timed_steps);
  ag::BufferCounts buffers;
  bench::HeapCounts heap;
  for (int s = 0; s < warm_up + steps; ++s) {
    const Batch batch = random_batch(rng, B, T, config.vocab);
    const ag::BufferCounts buffers_before = ag::buffer_counts();
    const bench::HeapCounts heap_before = bench::heap_counts();
    step(model, optimizer, batch, pieces, config.vocab);
    const ag::BufferCounts buffers_after = ag::buffer_counts();
    const bench::HeapCounts heap_after = bench::heap_counts();
    if (s < warm_up) continue;
    buffers.from_system += buffers_after.from_system - buffers_before.from_system;
    buffers.from_system_bytes += buffers_after.from_system_bytes - buffers_before.from_system_bytes;
    heap.calls += heap_after.calls - heap_before.calls;
    heap.bytes += heap_after.bytes - heap_before.bytes;
  }
  const nlohmann::json per_step = {{"buffers", double(buffers.from_system) / steps},
                                   {"buffer_bytes", double(buffers.from_system_bytes) / steps},
                                   {"heap", double(heap.calls) / steps},
                                   {"heap_bytes", double(heap.bytes) / steps}};
  std::printf(
      "allocations per step after %d, %d thread%s: tensor buffers %.1f (%.0f bytes), heap "
      "objects %.0f (%.0f bytes)\n",
      warm_up, threads, threads == 1 ? "" : "s", double(per_step["buffers"]),
      double(per_step["buffer_bytes"]), double(per_step["heap"]), double(per_step["heap_bytes"]));
  return per_step;
}

const char* phase_name(ag::profile::Phase phase) {
  switch (phase) {
    case ag::profile::Phase::forward:
      return "forward";
    case ag::profile::Phase::backward:
      return "backward";
    case ag::profile::Phase::optimizer:
      return "optimizer";
    case ag::profile::Phase::other:
      return "other";
  }
  return "other";
}

// The profile's rows by name, for the summary: each op's phases, each op's phases together,
// the time outside every timed op, and the matrix products' part of the wall time with their
// speed inside the step (the step's matmul GFLOP over their time per step).
nlohmann::json profile_summary(const ag::profile::Report& report, int steps, double gflop,
                               double peak) {
  const double wall = report.wall_ms > 0 ? report.wall_ms : 1;
  nlohmann::json out = {{"threads", 1},
                        {"steps", steps},
                        {"wall_ms", report.wall_ms},
                        {"ms_per_step", report.wall_ms / steps}};
  double timed = 0, gemm = 0;
  std::map<std::string, double> by_op;  // ms of each op, its phases together
  for (const ag::profile::OpTime& row : report.rows) {
    out["ops"][row.op][phase_name(row.phase)] = {{"calls", row.calls},
                                                 {"ms", row.ms},
                                                 {"ms_per_step", row.ms / steps},
                                                 {"share", row.ms / wall}};
    by_op[row.op] += row.ms;
    timed += row.ms;
    if (ag::profile::is_gemm(row.op)) gemm += row.ms;
  }
  for (const auto& [op, ms] : by_op) out["by_op"][op] = {{"ms", ms}, {"share", ms / wall}};
  const double outside = std::max(0.0, report.wall_ms - timed);
  out["outside"] = {{"ms", outside}, {"ms_per_step", outside / steps}, {"share", outside / wall}};
  const double gemm_ms_per_step = gemm / steps;
  const double gemm_gflops = gemm > 0 ? gflop / (gemm_ms_per_step / 1e3) : 0.0;
  out["gemm"] = {{"share", gemm / wall},
                 {"ms_per_step", gemm_ms_per_step},
                 {"gflops", gemm_gflops},
                 {"of_peak", peak > 0 ? gemm_gflops / peak : 0.0},
                 // how much faster the products could run at most on this thread's FMA units
                 {"headroom", gemm_gflops > 0 ? peak / gemm_gflops : 0.0}};
  out["other_share"] = 1 - gemm / wall;
  return out;
}

// The profile's products by kind (x W, dY W^T, X^T dY): calls, GFLOP and milliseconds per
// step, and their speed inside the step against the peak. Prints the table and returns the
// numbers for the summary's profile.products.
nlohmann::json product_summary(const ag::profile::Report& report, int steps, double peak) {
  nlohmann::json out = nlohmann::json::object();
  std::printf("\nproducts by kind (the gemm kernel's calls from the ops):\n");
  std::printf("%-8s %11s %14s %12s %9s %8s\n", "kind", "calls/step", "GFLOP/step", "ms/step",
              "GFLOP/s", "of peak");
  for (const ag::profile::ProductTotals& p : report.products) {
    const double gflop = p.flops / 1e9 / steps, ms = double(p.ns) / 1e6 / steps;
    const double gflops = ms > 0 ? gflop / (ms / 1e3) : 0.0;
    const double of_peak = peak > 0 ? gflops / peak : 0.0;
    std::printf("%-8s %11.1f %14.3f %12.2f %9.1f %8.2f\n", ag::profile::product_name(p.kind),
                double(p.calls) / steps, gflop, ms, gflops, of_peak);
    out[ag::profile::product_key(p.kind)] = {{"calls", p.calls},
                                             {"gflop_per_step", gflop},
                                             {"ms_per_step", ms},
                                             {"gflops", gflops},
                                             {"of_peak", of_peak}};
  }
  return out;
}

}  // namespace

// The program itself; main runs it in the book's frame (base/program_frame.hpp).
static int program_main(int argc, char** argv) {
  int steps = 20;
  bool profile = false;
  std::int64_t pieces = 0;  // 0: the trainer's rule
  std::string summary_path;
  pe::DecoderConfig config;  // the reference model
  CLI::App app{
      "One training step of the reference model, timed at 1 and 2 threads, beside the "
      "machine's FMA peak",
      "bench_train_step"};
  app.add_option("--steps", steps, "steps timed at each thread count, after 2 that warm up")
      ->capture_default_str()
      ->check(pe::whole_number(1, 100000));
  app.add_option("--layers", config.layers, "decoder blocks")
      ->capture_default_str()
      ->check(pe::whole_number<std::int64_t>(1, 64));
  app.add_option("--heads", config.heads, "attention heads (the width 256 must divide)")
      ->capture_default_str()
      ->check(pe::whole_number<std::int64_t>(1, 256));
  app.add_option("--micro-batches", pieces,
                 "micro-batches per step (default: the trainer's rule, ag::micro_batch_count: 4 "
                 "for the reference batch); 1 runs the whole batch in one pass, each op split "
                 "between the threads")
      ->check(pe::whole_number<std::int64_t>(1, 64));
  app.add_flag("--profile", profile, "also print where the time of the steps at 1 thread went");
  app.add_option("--summary", summary_path,
                 "also write what it printed and its numbers by name to this JSON file")
      ->check(pe::not_empty("a file"));
  if (const auto status = pe::parse_command_line(app, argc, argv)) return *status;
  if (config.width % config.heads != 0) {
    std::cerr << "bench_train_step: --heads " << config.heads << " does not divide the width "
              << config.width << "\n";
    return 2;
  }
  nlohmann::json summary = {{"program", "bench_train_step"},
                            {"steps", steps},
                            {"layers", config.layers},
                            {"heads", config.heads},
                            {"profile", profile},
                            {"versions", pe::build_versions()},  // the commit, read as it starts
                            {"machine", bench::machine()}};
  summary["machine"]["load_average"] = bench::load_average();  // how busy, as it starts
  std::unique_ptr<pe::StdoutCapture> capture;  // what it prints goes to the summary too
  if (!summary_path.empty()) capture = std::make_unique<pe::StdoutCapture>();
  // The peak of the instruction set the kernels run on (the widest the CPU has, unless PE_SIMD
  // chose another), measured before the model exists so that nothing else competes.
  const std::vector<bench::Peak> peaks = bench::measure_fma_peaks(5);
  const std::string path = ag::kernels::simd_path_name();
  double peak = 0;  // 0: no peak for this path (the scalar one), so no fraction
  std::string peak_isa = "none";
  for (const bench::Peak& p : peaks) {
    if (p.isa == path) {
      peak = p.gflops;
      peak_isa = p.isa;
    }
  }
  std::printf("peak fma: %s %.1f GFLOP/s per thread (kernels on %s)\n", peak_isa.c_str(), peak,
              path.c_str());
  summary["peak"] = {{"isa", peak_isa}, {"gflops", peak}, {"kernels", path}};
  const std::int64_t B = 64, T = 32;
  if (pieces == 0) pieces = ag::micro_batch_count(B, T);
  ag::Rng rng(0);
  pe::Decoder model(config, std::make_shared<pe::NoEncoding>(), rng);
  ag::AdamW optimizer(model.parameters(), 1e-3);
  const double gflop = step_flops(config, B, T) / 1e9;
  std::printf(
      "reference step: batch %ld, length %ld, %ld layers, %ld heads, %.2f GFLOP of matmul per "
      "step, %ld micro-batches\n",
      long(B), long(T), long(config.layers), long(config.heads), gflop, long(pieces));
  summary["batch"] = B;
  summary["length"] = T;
  summary["step_gflop"] = gflop;
  summary["micro_batches"] = pieces;
  double one_thread_ms = 0;
  for (int threads : {1, 2}) {
    ag::set_max_threads(threads);
    const double ms = median_ms(model, optimizer, rng, steps, config, B, T, pieces);
    const double rate = gflop / (ms / 1e3);
    const double of_limit = peak > 0 ? rate / (peak * threads) : 0.0;
    std::printf(
        "threads %d: %8.1f ms/step (median of %d)  %6.1f GFLOP/s of matmul  %.2f of the limit\n",
        threads, ms, steps, rate, of_limit);
    nlohmann::json& at = summary["threads"][std::to_string(threads)];
    at = {{"ms", ms}, {"gflops", rate}, {"of_limit", of_limit}};
    if (threads == 1) {
      one_thread_ms = ms;
    } else {
      at["speedup"] = one_thread_ms / ms;  // the one-thread time over this one
    }
  }
  if (pieces > 1) {
    // The other way to use two threads, for comparison: the whole batch in one pass, each op's
    // kernel split between the threads (what a step of one micro-batch does).
    ag::set_max_threads(2);
    const double ms = median_ms(model, optimizer, rng, steps, config, B, T, 1);
    const double rate = gflop / (ms / 1e3);
    const double of_limit = peak > 0 ? rate / (peak * 2) : 0.0;
    std::printf(
        "threads 2, one pass, each op split: %8.1f ms/step  %6.1f GFLOP/s of matmul  %.2f of the "
        "limit\n",
        ms, rate, of_limit);
    summary["threads"]["2"]["ops_split"] = {
        {"ms", ms}, {"gflops", rate}, {"of_limit", of_limit}, {"speedup", one_thread_ms / ms}};
  }
  summary["allocations"] =
      allocations_per_step(model, optimizer, rng, config, B, T, pieces, 1, steps);
  summary["allocations"]["two_threads"] =
      allocations_per_step(model, optimizer, rng, config, B, T, pieces, 2, steps);
  if (profile) {
    ag::set_max_threads(1);
    ag::profile::start();
    median_ms(model, optimizer, rng, steps, config, B, T, pieces);
    const ag::profile::Report report = ag::profile::stop();
    std::printf("\nprofile at 1 thread, %d steps (the 2 warm-up steps included):\n%s", steps + 2,
                ag::profile::format(report, steps + 2).c_str());
    summary["profile"] = profile_summary(report, steps + 2, gflop, peak);
    summary["profile"]["products"] = product_summary(report, steps + 2, peak);
  }
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  std::printf("peak resident memory: %.0f MB\n", usage.ru_maxrss / 1024.0);
  summary["peak_memory_mb"] = usage.ru_maxrss / 1024.0;
  if (capture) {
    summary["output"] = pe::split_lines(capture->finish());
    try {
      ag::write_file_atomically(summary_path, summary.dump(1) + "\n");
    } catch (const std::exception& e) {
      std::cerr << "bench_train_step: " << e.what() << "\n";
      return 1;
    }
    std::cerr << "summary in " << summary_path << "\n";
  }
  return 0;
}

int main(int argc, char** argv) {
  return pe::run_program(
      "bench_train_step", [&] { return program_main(argc, argv); }, "measuring training steps");
}
