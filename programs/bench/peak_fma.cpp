// The peak-FMA loop, once per instruction set. Each version is a plain function compiled for
// its instruction set with a target attribute and called only when the CPU has it (it uses
// no inline library code, so nothing of it can end up in baseline code).
//
// Enough independent accumulators that the FMA units never wait for a previous result:
// latency (4-5 cycles) x FMA units (2) = 8-10 chains at least; 16 (12 with 16 registers).
#include "programs/bench/peak_fma.hpp"

#include <time.h>

#include <algorithm>
#include <fstream>
#include <thread>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace bench {
namespace {

double thread_seconds() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

// a = a * x + y converges to y / (1 - x), about 1e7: no overflow, no subnormals.
constexpr float kX = 1.0000001f, kY = 0.9999999f;
constexpr long kSteps = 4'000'000;

#if defined(__x86_64__)
// [peak-fma]
__attribute__((target("avx512f"))) float fma_loop_avx512(long steps) {
  constexpr int kChains = 16;
  __m512 acc[kChains];
  const __m512 x = _mm512_set1_ps(kX), y = _mm512_set1_ps(kY);
  for (int c = 0; c < kChains; ++c) acc[c] = _mm512_set1_ps(float(c));
  for (long s = 0; s < steps; ++s) {
#pragma GCC unroll 16
    for (int c = 0; c < kChains; ++c) acc[c] = _mm512_fmadd_ps(acc[c], x, y);
  }
  float lanes[16];
  for (int c = 1; c < kChains; ++c) acc[0] = _mm512_add_ps(acc[0], acc[c]);
  _mm512_storeu_ps(lanes, acc[0]);
  return lanes[0];
}
// [peak-fma]

__attribute__((target("avx2,fma"))) float fma_loop_avx2(long steps) {
  constexpr int kChains = 12;
  __m256 acc[kChains];
  const __m256 x = _mm256_set1_ps(kX), y = _mm256_set1_ps(kY);
  for (int c = 0; c < kChains; ++c) acc[c] = _mm256_set1_ps(float(c));
  for (long s = 0; s < steps; ++s) {
#pragma GCC unroll 16
    for (int c = 0; c < kChains; ++c) acc[c] = _mm256_fmadd_ps(acc[c], x, y);
  }
  float lanes[8];
  for (int c = 1; c < kChains; ++c) acc[0] = _mm256_add_ps(acc[0], acc[c]);
  _mm256_storeu_ps(lanes, acc[0]);
  return lanes[0];
}

// SSE2 has no fused multiply-add: a multiply and an add, counted as two flops as well.
float mul_add_loop_sse2(long steps) {
  constexpr int kChains = 12;
  __m128 acc[kChains];
  const __m128 x = _mm_set1_ps(kX), y = _mm_set1_ps(kY);
  for (int c = 0; c < kChains; ++c) acc[c] = _mm_set1_ps(float(c));
  for (long s = 0; s < steps; ++s) {
#pragma GCC unroll 16
    for (int c = 0; c < kChains; ++c) acc[c] = _mm_add_ps(_mm_mul_ps(acc[c], x), y);
  }
  for (int c = 1; c < kChains; ++c) acc[0] = _mm_add_ps(acc[0], acc[c]);
  return _mm_cvtss_f32(acc[0]);
}
#endif

volatile float sink;  // keeps the loops' results alive

double best_gflops(float (*loop)(long), double flops_per_step, int repetitions) {
  double best = 0;
  for (int r = 0; r < repetitions; ++r) {
    const double start = thread_seconds();
    sink = loop(kSteps);
    const double seconds = thread_seconds() - start;
    best = std::max(best, flops_per_step * double(kSteps) / seconds * 1e-9);
  }
  return best;
}

}  // namespace

std::vector<Peak> measure_fma_peaks(int repetitions) {
  std::vector<Peak> peaks;
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f"))
    peaks.push_back({"avx512", best_gflops(fma_loop_avx512, 16 * 16 * 2, repetitions)});
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    peaks.push_back({"avx2", best_gflops(fma_loop_avx2, 12 * 8 * 2, repetitions)});
  peaks.push_back({"sse2", best_gflops(mul_add_loop_sse2, 12 * 4 * 2, repetitions)});
#endif
  return peaks;
}

std::map<std::string, std::string> machine() {
  std::map<std::string, std::string> out = {
      {"cpu", "unknown"}, {"cpu_family", "unknown"}, {"cpu_model", "unknown"}};
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = line.substr(0, colon);
    while (!key.empty() && (key.back() == ' ' || key.back() == '\t')) key.pop_back();
    const std::string value = colon + 2 <= line.size() ? line.substr(colon + 2) : "";
    if (key == "model name" && out["cpu"] == "unknown") out["cpu"] = value;
    if (key == "cpu family" && out["cpu_family"] == "unknown") out["cpu_family"] = value;
    if (key == "model" && out["cpu_model"] == "unknown") out["cpu_model"] = value;
  }
  out["logical_cpus"] = std::to_string(std::thread::hardware_concurrency());
  return out;
}

double load_average() {
  std::ifstream loadavg("/proc/loadavg");
  double one_minute = 0;
  if (!(loadavg >> one_minute)) return 0;
  return one_minute;
}

}  // namespace bench
