#include "chapters/A-performance/measure.hpp"

#include <time.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>

#include "ag/functional.hpp"
#include "ag/kernels/elementwise.hpp"
#include "ag/kernels/gemm.hpp"
#include "ag/kernels/layernorm.hpp"
#include "ag/kernels/softmax.hpp"
#include "ag/random.hpp"

namespace appendix_a {

namespace {

double thread_seconds() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

// Seconds per call of `call`, the best of the repetitions. The number of calls per
// repetition is found first, by doubling until one batch of calls takes min_seconds, so
// that the clock is read twice per batch and not once per call.
double seconds_per_call(const std::function<void()>& call, const Effort& effort) {
  call();  // warm the caches and the page tables
  long calls = 1;
  for (;;) {
    const double start = thread_seconds();
    for (long i = 0; i < calls; ++i) call();
    if (thread_seconds() - start >= effort.min_seconds || calls >= (1L << 30)) break;
    calls *= 2;
  }
  double best = std::numeric_limits<double>::infinity();
  for (int r = 0; r < effort.repetitions; ++r) {
    const double start = thread_seconds();
    for (long i = 0; i < calls; ++i) call();
    best = std::min(best, (thread_seconds() - start) / double(calls));
  }
  return best;
}

std::vector<float> random_floats(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

std::string shape_name(std::initializer_list<std::size_t> extents) {
  std::string out;
  for (std::size_t e : extents) {
    if (!out.empty()) out += 'x';
    out += std::to_string(e);
  }
  return out;
}

// The reference model (experiments' defaults): batch, length, width, feed-forward, letters.
constexpr std::size_t B = 64, T = 32, C = 256, F = 1024, V = 26;
constexpr std::size_t kRows = B * T;  // one row per token: 2048

// gemm: C[M, N] = op(A)[M, K] op(B)[K, N], `batches` independent products per call.
// Work 2MNK per product; compulsory traffic: A, B and C once each, 4 bytes a value.
KernelPoint gemm_point(const std::string& name, bool trans_a, bool trans_b, std::size_t M,
                       std::size_t K, std::size_t N, std::size_t batches, const Effort& effort) {
  const auto a = random_floats(batches * M * K, 1), b = random_floats(batches * K * N, 2);
  std::vector<float> c(batches * M * N);
  const std::size_t lda = trans_a ? M : K, ldb = trans_b ? K : N;
  KernelPoint p;
  p.name = name;
  p.shape =
      batches > 1 ? std::to_string(batches) + " x " + shape_name({M, K, N}) : shape_name({M, K, N});
  p.flops = 2.0 * double(M * N * K * batches);
  p.bytes = 4.0 * double((M * K + K * N + M * N) * batches);
  p.seconds = seconds_per_call(
      [&] {
        for (std::size_t i = 0; i < batches; ++i)
          ag::kernels::gemm<float>(trans_a, trans_b, M, N, K, 1.0f, a.data() + i * M * K, lda,
                                   b.data() + i * K * N, ldb, 0.0f, c.data() + i * M * N, N);
      },
      effort);
  return p;
}

}  // namespace

// [stream]
std::vector<Bandwidth> measure_bandwidths(std::size_t memory_bytes, const Effort& effort) {
  std::vector<Bandwidth> out;
  // Half of L2 (1 MiB here), an L3-sized set like the activations of a step, and far more
  // than any cache.
  const std::pair<const char*, std::size_t> levels[] = {
      {"L2", std::size_t(512) << 10}, {"L3", std::size_t(8) << 20}, {"memory", memory_bytes}};
  for (const auto& [level, bytes] : levels) {
    const std::size_t n = bytes / (2 * sizeof(float));  // two arrays, x and y
    std::vector<float> x(n, 1.0f), y(n, 0.0f);
    // y += 0.5 x reads x and y and writes y: 12 bytes per element, one fused multiply-add.
    const double seconds =
        seconds_per_call([&] { ag::kernels::axpy(0.5f, x.data(), y.data(), n); }, effort);
    out.push_back({level, bytes, 12.0 * double(n) / seconds * 1e-9});
  }
  return out;
}
// [stream]

std::vector<KernelPoint> measure_kernel_points(const Effort& effort) {
  std::vector<KernelPoint> points;
  // The matrix products of one decoder block and the head, forward; and the weight gradient
  // of the projections (A^T dC, op(A) transposed) from the backward pass.
  points.push_back(gemm_point("gemm q/k/v/out", false, false, kRows, C, C, 1, effort));
  points.push_back(gemm_point("gemm ffn expand", false, false, kRows, C, F, 1, effort));
  points.push_back(gemm_point("gemm ffn contract", false, false, kRows, F, C, 1, effort));
  points.push_back(gemm_point("gemm weight grad", true, false, C, kRows, C, 1, effort));
  points.push_back(gemm_point("gemm head", false, false, kRows, C, V, 1, effort));
  points.push_back(gemm_point("gemm scores q k^T", false, true, T, C, T, B, effort));
  points.push_back(gemm_point("gemm weights v", false, false, T, T, C, B, effort));

  // The row-wise and element-wise ops. Work counts each operation of the formula once (a
  // fused multiply-add twice, exp once); traffic counts the big arrays only (gamma, beta and
  // the row statistics are a few KiB and stay in cache).
  const std::size_t n = kRows * C;  // activations [B, T, C]
  const auto x = random_floats(kRows * F, 3), dy = random_floats(kRows * F, 4);
  const auto gamma = random_floats(C, 5), beta = random_floats(C, 6);
  std::vector<float> y(kRows * F), dx(kRows * F), mean(kRows), rstd(kRows), dgamma(C), dbeta(C);
  auto point = [&](const char* name, std::string shape, double flops, double bytes,
                   const std::function<void()>& call) {
    points.push_back({name, std::move(shape), flops, bytes, seconds_per_call(call, effort)});
  };
  point("add (residual)", shape_name({kRows, C}), 1.0 * n, 12.0 * n,
        [&] { ag::kernels::add(x.data(), dy.data(), y.data(), n); });
  point("relu", shape_name({kRows, F}), 1.0 * kRows * F, 8.0 * kRows * F,
        [&] { ag::kernels::relu(x.data(), y.data(), kRows * F); });
  const std::size_t s = B * T * T;  // attention weights [B, H = 1, T, T], rows of T
  point("softmax", shape_name({B * T, T}), 5.0 * s, 8.0 * s,
        [&] { ag::kernels::softmax_rows(x.data(), y.data(), B * T, T); });
  point("softmax backward", shape_name({B * T, T}), 4.0 * s, 12.0 * s,
        [&] { ag::kernels::softmax_rows_backward(x.data(), dy.data(), dx.data(), B * T, T); });
  point("layer norm", shape_name({kRows, C}), 8.0 * n, 8.0 * n, [&] {
    ag::kernels::layernorm_rows(x.data(), gamma.data(), beta.data(), y.data(), mean.data(),
                                rstd.data(), kRows, C, 1e-5f);
  });
  point("layer norm backward", shape_name({kRows, C}), 17.0 * n, 12.0 * n, [&] {
    ag::kernels::layernorm_rows_backward(x.data(), gamma.data(), mean.data(), rstd.data(),
                                         dy.data(), dx.data(), dgamma.data(), dbeta.data(), kRows,
                                         C);
  });
  return points;
}

std::vector<FusedVsComposite> measure_fused_vs_composite(const Effort& effort) {
  ag::Rng rng(0);
  // One forward and one backward through the engine, seeded with a fixed output gradient.
  auto forward_backward = [](const std::function<ag::Tensor()>& f, const ag::Tensor& seed) {
    return [f, seed] { f().backward(seed); };
  };
  std::vector<FusedVsComposite> out;

  ag::Tensor scores = ag::randn({64, 1, 32, 32}, rng).set_requires_grad();
  ag::Tensor g = ag::randn(scores.shape(), rng);
  out.push_back(
      {"softmax", "64x1x32x32",
       1e3 * seconds_per_call(forward_backward([&] { return ag::softmax(scores); }, g), effort),
       1e3 * seconds_per_call(forward_backward([&] { return ag::composite::softmax(scores); }, g),
                              effort)});

  ag::Tensor x = ag::randn({64, 32, 256}, rng).set_requires_grad();
  ag::Tensor gamma = ag::randn({256}, rng).set_requires_grad();
  ag::Tensor beta = ag::randn({256}, rng).set_requires_grad();
  ag::Tensor gx = ag::randn(x.shape(), rng);
  out.push_back(
      {"layer_norm", "64x32x256",
       1e3 * seconds_per_call(forward_backward([&] { return ag::layer_norm(x, gamma, beta); }, gx),
                              effort),
       1e3 * seconds_per_call(
                 forward_backward([&] { return ag::composite::layer_norm(x, gamma, beta); }, gx),
                 effort)});
  return out;
}

}  // namespace appendix_a
