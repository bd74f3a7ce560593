// One training step of the reference model (1 layer, 1 head, width 256, feed-forward 1024,
// batch 64, length 32): forward, backward and an AdamW step, timed with 1 and 2 threads.
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
// one-thread time over the two-thread time), allocations.{buffers,buffer_bytes,heap,heap_bytes}
// (per step at 1 thread, once the steps before made the buffers), peak_memory_mb, machine (the CPU,
// and the load average as it started), and with --profile the profile:
// profile.ops.<op>.<phase>.{calls,ms,ms_per_step,share}, profile.by_op.<op>.{ms,share} (its
// phases together), profile.outside, profile.wall_ms, profile.gemm.{share,ms_per_step,gflops,
// of_peak,headroom} (the matrix products' part of the wall time, their speed inside the step,
// and the peak over that speed: what a second thread on the same FMA units could gain at most)
// and profile.other_share (everything else). Shares are fractions of the profile's wall time.
//
//   bench_train_step [--steps N] [--layers L] [--heads H] [--profile] [--summary FILE]
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

// Matmul FLOPs of one step: each product costs 2MNK forward and twice that backward.
double step_flops(const pe::DecoderConfig& c, std::int64_t B, std::int64_t T) {
  const double rows = double(B) * T;
  double forward = 2 * rows * c.width * c.vocab;                  // head
  forward += c.layers * (4 * 2 * rows * c.width * c.width         // q, k, v, output
                         + 2 * 2 * rows * c.width * c.ffn_width   // expand, contract
                         + 2 * 2 * double(B) * T * T * c.width);  // scores, weights @ v
  return 3 * forward;
}

double median_ms(pe::Decoder& model, ag::AdamW& optimizer, ag::Rng& rng, int steps,
                 const pe::DecoderConfig& config, std::int64_t B, std::int64_t T) {
  std::vector<double> times;
  for (int s = 0; s < steps + 2; ++s) {
    const ag::Indices ids = random_ids(rng, B, T, config.vocab);
    ag::Indices targets = random_ids(rng, B * T, 1, config.vocab);
    targets.shape = {B * T};
    const auto start = std::chrono::steady_clock::now();
    optimizer.zero_grad();
    ag::Tensor logits = model.forward(ids);
    ag::Tensor loss = ag::cross_entropy(ag::reshape(logits, {B * T, config.vocab}), targets);
    loss.backward();
    optimizer.step();
    const auto end = std::chrono::steady_clock::now();
    if (s >= 2) times.push_back(std::chrono::duration<double, std::milli>(end - start).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

// What one training step allocates once the steps before it made its tensors' buffers, at 1
// thread: tensor buffers the cache had none for (ag/buffers.hpp), and calls of operator new
// (count_allocations.hpp: tensor handles, tape nodes, shapes, the engine's bookkeeping). The
// step is median_ms's, each counted from its start to its end, batches made outside.
nlohmann::json allocations_per_step(pe::Decoder& model, ag::AdamW& optimizer, ag::Rng& rng,
                                    const pe::DecoderConfig& config, std::int64_t B,
                                    std::int64_t T) {
  ag::set_max_threads(1);
  const int steps = 5;
  ag::BufferCounts buffers;
  bench::HeapCounts heap;
  for (int s = 0; s <= steps; ++s) {  // step 0 is not counted: its buffers may be new
    const ag::Indices ids = random_ids(rng, B, T, config.vocab);
    ag::Indices targets = random_ids(rng, B * T, 1, config.vocab);
    targets.shape = {B * T};
    const ag::BufferCounts buffers_before = ag::buffer_counts();
    const bench::HeapCounts heap_before = bench::heap_counts();
    {
      optimizer.zero_grad();
      ag::Tensor logits = model.forward(ids);
      ag::Tensor loss = ag::cross_entropy(ag::reshape(logits, {B * T, config.vocab}), targets);
      loss.backward();
      optimizer.step();
    }
    const ag::BufferCounts buffers_after = ag::buffer_counts();
    const bench::HeapCounts heap_after = bench::heap_counts();
    if (s == 0) continue;
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
      "allocations per step after the first: tensor buffers %.0f (%.0f bytes), heap objects "
      "%.0f (%.0f bytes)\n",
      double(per_step["buffers"]), double(per_step["buffer_bytes"]), double(per_step["heap"]),
      double(per_step["heap_bytes"]));
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

}  // namespace

// The program itself; main runs it in the book's frame (base/program_frame.hpp).
static int program_main(int argc, char** argv) {
  int steps = 20;
  bool profile = false;
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
  ag::Rng rng(0);
  pe::Decoder model(config, std::make_shared<pe::NoEncoding>(), rng);
  ag::AdamW optimizer(model.parameters(), 1e-3);
  const double gflop = step_flops(config, B, T) / 1e9;
  std::printf(
      "reference step: batch %ld, length %ld, %ld layers, %ld heads, %.2f GFLOP of matmul per "
      "step\n",
      long(B), long(T), long(config.layers), long(config.heads), gflop);
  summary["batch"] = B;
  summary["length"] = T;
  summary["step_gflop"] = gflop;
  double one_thread_ms = 0;
  for (int threads : {1, 2}) {
    ag::set_max_threads(threads);
    const double ms = median_ms(model, optimizer, rng, steps, config, B, T);
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
  summary["allocations"] = allocations_per_step(model, optimizer, rng, config, B, T);
  if (profile) {
    ag::set_max_threads(1);
    ag::profile::start();
    median_ms(model, optimizer, rng, steps, config, B, T);
    const ag::profile::Report report = ag::profile::stop();
    std::printf("\nprofile at 1 thread, %d steps (the 2 warm-up steps included):\n%s", steps + 2,
                ag::profile::format(report, steps + 2).c_str());
    summary["profile"] = profile_summary(report, steps + 2, gflop, peak);
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
