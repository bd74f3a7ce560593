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
//   bench_train_step [--steps N] [--layers L] [--heads H] [--profile]
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>

#include "ag/kernels/dispatch.hpp"
#include "ag/optim.hpp"
#include "ag/profile.hpp"
#include "ag/threads.hpp"
#include "base/command_line.hpp"
#include "chapters/01-attention/decoder.hpp"
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

}  // namespace

int main(int argc, char** argv) {
  int steps = 20;
  bool profile = false;
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
  if (const auto status = pe::parse_command_line(app, argc, argv)) return *status;
  if (config.width % config.heads != 0) {
    std::cerr << "bench_train_step: --heads " << config.heads << " does not divide the width "
              << config.width << "\n";
    return 2;
  }
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
  const std::int64_t B = 64, T = 32;
  ag::Rng rng(0);
  pe::Decoder model(config, std::make_shared<pe::NoEncoding>(), rng);
  ag::AdamW optimizer(model.parameters(), 1e-3);
  const double gflop = step_flops(config, B, T) / 1e9;
  std::printf(
      "reference step: batch %ld, length %ld, %ld layers, %ld heads, %.2f GFLOP of matmul per "
      "step\n",
      long(B), long(T), long(config.layers), long(config.heads), gflop);
  for (int threads : {1, 2}) {
    ag::set_max_threads(threads);
    const double ms = median_ms(model, optimizer, rng, steps, config, B, T);
    const double rate = gflop / (ms / 1e3);
    std::printf(
        "threads %d: %8.1f ms/step (median of %d)  %6.1f GFLOP/s of matmul  %.2f of the limit\n",
        threads, ms, steps, rate, peak > 0 ? rate / (peak * threads) : 0.0);
  }
  if (profile) {
    ag::set_max_threads(1);
    ag::profile::start();
    median_ms(model, optimizer, rng, steps, config, B, T);
    const ag::profile::Report report = ag::profile::stop();
    std::printf("\nprofile at 1 thread, %d steps (the 2 warm-up steps included):\n%s", steps + 2,
                ag::profile::format(report, steps + 2).c_str());
  }
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  std::printf("peak resident memory: %.0f MB\n", usage.ru_maxrss / 1024.0);
  return 0;
}
