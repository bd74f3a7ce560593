// Single-threaded float32 matrix multiply: our gemm against OpenBLAS and against the
// machine's peak, in the same process.
//
// The peak is measured first: a register-only FMA loop per instruction set (peak_fma.cpp);
// the summary divides our GFLOP/s by the peak of the widest one.
// Each shape [M, K] @ [K, N] is run as ours (no transpose), ours with B transposed (the
// Linear layer's backward pass), and OpenBLAS's cblas_sgemm for both. The GFLOP/s counter
// counts 2*M*N*K flops per product. A table of ours / OpenBLAS follows the benchmark output.
// On a shared machine, run
//   bench_matmul --benchmark_repetitions=5 --benchmark_enable_random_interleaving=true
// so that a burst of load hits both libraries alike; the table takes the best repetition.
//
// --summary=FILE (before or among the benchmark's own flags) also writes what it printed and
// the table's numbers by name, as JSON written whole (appendix A quotes
// chapters/A-performance/results/matmul.json): table (the lines of the summary table that
// ends the output), openblas_core, machine, peak.<isa>, shapes.<MxKxN>.{ours,
// ours_trans_b, openblas, openblas_trans_b, of_peak, of_peak_trans_b, ratio, ratio_trans_b,
// openblas_of_avx2_peak} (GFLOP/s; of_peak divides by the widest peak, ratio is ours /
// OpenBLAS), and the ranges over the shapes that the text quotes: of_peak.{min,max} (both of
// our columns), ratio.{min,max}, openblas.{gflops,of_avx2_peak}.{min,max} (B as stored).
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "ag/files.hpp"
#include "ag/kernels/dispatch.hpp"
#include "ag/kernels/gemm.hpp"
#include "ag/profile.hpp"
#include "ag/threads.hpp"
#include "base/build_record.hpp"
#include "base/program_frame.hpp"
#include "base/stdout_capture.hpp"
#include "programs/bench/peak_fma.hpp"

// OpenBLAS, declared here rather than through <cblas.h>, whose location varies.
// openblas_set_num_threads is weak so that the benchmark still links against a BLAS that
// lacks it (the reference BLAS is single-threaded anyway).
extern "C" {
void openblas_set_num_threads(int num_threads) __attribute__((weak));
char* openblas_get_corename(void) __attribute__((weak));
enum CBLAS_ORDER { CblasRowMajor = 101, CblasColMajor = 102 };
enum CBLAS_TRANSPOSE { CblasNoTrans = 111, CblasTrans = 112 };
void cblas_sgemm(CBLAS_ORDER order, CBLAS_TRANSPOSE trans_a, CBLAS_TRANSPOSE trans_b, int M, int N,
                 int K, float alpha, const float* A, int lda, const float* B, int ldb, float beta,
                 float* C, int ldc);
}

namespace {

struct Shape {
  int M, K, N;
  std::string name() const {
    return std::to_string(M) + "x" + std::to_string(K) + "x" + std::to_string(N);
  }
};

constexpr Shape kShapes[] = {
    {256, 256, 256}, {2048, 256, 256}, {2048, 256, 1024}, {2048, 1024, 256}};

enum class Library { Ours, OpenBLAS };

/// The forward product of a Linear layer: x [rows, in] times W [in, out].
struct LinearShape {
  int rows, in, out;
  std::string name() const {
    return std::to_string(rows) + "x" + std::to_string(in) + "x" + std::to_string(out);
  }
};

/// The reference step's layers (width 256, feed-forward 1024, 26 letters): attention's
/// projections, the feed-forward's expansion and contraction, the head; per micro-batch of
/// 16 sequences of 32 and for the whole batch of 64.
constexpr LinearShape kLinearShapes[] = {{512, 256, 256},   {512, 256, 1024}, {512, 1024, 256},
                                         {512, 256, 26},    {2048, 256, 256}, {2048, 256, 1024},
                                         {2048, 1024, 256}, {2048, 256, 26}};

/// A Linear layer's three products: its forward and the two of its backward rule (the kinds
/// ag::profile counts, with the same keys).
using LinearProduct = ag::profile::ProductKind;
constexpr LinearProduct kLinearProducts[] = {LinearProduct::xW, LinearProduct::dYWt,
                                             LinearProduct::XtdY};
using ag::profile::product_key;

std::vector<float> random_matrix(std::size_t elements, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> m(elements);
  for (float& x : m) x = dist(rng);
  return m;
}

/// C[M, N] = A[M, K] @ op(B), with B stored [K, N], or [N, K] when trans_b.
void run_matmul(benchmark::State& state, Library library, Shape s, bool trans_b) {
  const auto A = random_matrix(std::size_t(s.M) * s.K, 1);
  const auto B = random_matrix(std::size_t(s.K) * s.N, 2);
  std::vector<float> C(std::size_t(s.M) * s.N);
  const int ldb = trans_b ? s.K : s.N;
  for (auto _ : state) {
    if (library == Library::Ours) {
      ag::kernels::gemm<float>(false, trans_b, s.M, s.N, s.K, 1.0f, A.data(), s.K, B.data(), ldb,
                               0.0f, C.data(), s.N);
    } else {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans, s.M, s.N, s.K,
                  1.0f, A.data(), s.K, B.data(), ldb, 0.0f, C.data(), s.N);
    }
    benchmark::DoNotOptimize(C.data());
    benchmark::ClobberMemory();
  }
  const double gflop = 2.0 * s.M * s.N * s.K * 1e-9;
  state.counters["GFLOP/s"] =
      benchmark::Counter(gflop * double(state.iterations()), benchmark::Counter::kIsRate);
}

/// One of a Linear layer's products at shape s, as the layer calls the kernel (gemm_batched,
/// here on one thread): x W ([rows, out]), dY W^T ([rows, in]) or X^T dY ([in, out]), with x
/// [rows, in], W [in, out] and dY [rows, out] as the layer stores them.
void run_linear(benchmark::State& state, LinearProduct product, LinearShape s) {
  const auto x = random_matrix(std::size_t(s.rows) * s.in, 1);
  const auto w = random_matrix(std::size_t(s.in) * s.out, 2);
  const auto dy = random_matrix(std::size_t(s.rows) * s.out, 3);
  ag::kernels::BatchedGemm<float> g;
  g.ldb = std::size_t(s.out);  // W and dY both have rows of `out`
  if (product == LinearProduct::xW) {
    g.M = s.rows, g.N = s.out, g.K = s.in;
    g.A = x.data(), g.lda = s.in, g.B = w.data();
  } else if (product == LinearProduct::dYWt) {
    g.trans_b = true;
    g.M = s.rows, g.N = s.in, g.K = s.out;
    g.A = dy.data(), g.lda = s.out, g.B = w.data();
  } else {
    g.trans_a = true;
    g.M = s.in, g.N = s.out, g.K = s.rows;
    g.A = x.data(), g.lda = s.in, g.B = dy.data();
  }
  std::vector<float> C(g.M * g.N);
  g.C = C.data(), g.ldc = g.N;
  for (auto _ : state) {
    ag::kernels::gemm_batched(g);
    benchmark::DoNotOptimize(C.data());
    benchmark::ClobberMemory();
  }
  const double gflop = 2.0 * s.rows * s.in * s.out * 1e-9;
  state.counters["GFLOP/s"] =
      benchmark::Counter(gflop * double(state.iterations()), benchmark::Counter::kIsRate);
}

std::string linear_name(LinearProduct product, const LinearShape& s) {
  return std::string("Linear_") + product_key(product) + "/" + s.name();
}

std::string run_name(Library library, bool trans_b, const Shape& s) {
  return std::string(library == Library::Ours ? "Ours" : "OpenBLAS") +
         (trans_b ? "_TransB/" : "/") + s.name();
}

/// The console reporter, also remembering each benchmark's GFLOP/s for the summary table:
/// the best over its repetitions (--benchmark_repetitions=N), since other processes on the
/// machine can only slow a run down, or the median when only aggregates are reported.
class RecordingReporter : public benchmark::ConsoleReporter {
 public:
  explicit RecordingReporter(OutputOptions options) : ConsoleReporter(options) {}
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      auto it = run.counters.find("GFLOP/s");
      if (it == run.counters.end()) continue;
      const std::string& name = run.run_name.function_name;
      if (run.run_type == Run::RT_Iteration) {
        best_[name] = std::max(best_[name], it->second.value);
      } else if (run.aggregate_name == "median") {
        median_[name] = it->second.value;
      }
    }
    ConsoleReporter::ReportRuns(runs);
  }

  /// The GFLOP/s of the named benchmark, or 0 if it was not run (e.g. filtered out).
  double gflops(const std::string& name) const {
    for (const auto* results : {&best_, &median_}) {
      auto it = results->find(name);
      if (it != results->end()) return it->second;
    }
    return 0.0;
  }

 private:
  std::map<std::string, double> best_;    // over the individual repetitions
  std::map<std::string, double> median_;  // the median aggregate
};

/// Widens [min, max] of range["min"], range["max"] to hold value.
void widen(nlohmann::json& range, double value) {
  range["min"] = range.contains("min") ? std::min(range["min"].get<double>(), value) : value;
  range["max"] = range.contains("max") ? std::max(range["max"].get<double>(), value) : value;
}

/// Prints the summary table, and records it (summary["table"]: its lines) and its numbers.
void print_summary(const RecordingReporter& reporter, const std::vector<bench::Peak>& peaks,
                   nlohmann::json& summary) {
  std::string text;
  char line[512];
  text += "Peak (register-only FMA loop, float32, one thread, best of the repetitions):";
  for (const bench::Peak& p : peaks) {
    std::snprintf(line, sizeof line, "  %s %.1f GFLOP/s", p.isa.c_str(), p.gflops);
    text += line;
    summary["peak"][p.isa] = p.gflops;
  }
  const double peak = peaks.empty() ? 0.0 : peaks.front().gflops;
  double avx2_peak = 0;
  for (const bench::Peak& p : peaks)
    if (p.isa == "avx2") avx2_peak = p.gflops;
  std::snprintf(line, sizeof line,
                "\nOur gemm runs on SIMD path %s; \"of peak\" divides by the %s peak.\n",
                ag::kernels::simd_path_name(), peaks.empty() ? "(no)" : peaks.front().isa.c_str());
  text += line;
  std::snprintf(line, sizeof line, "OpenBLAS runs its kernels for the CPU it calls %s.\n",
                summary["openblas_core"].get<std::string>().c_str());
  text += line;
  text += "\nSummary (float32, single thread, GFLOP/s):\n";
  std::snprintf(line, sizeof line, "%-16s %8s %9s %7s %8s %9s %9s %7s %8s\n", "M x K x N", "ours",
                "OpenBLAS", "ratio", "of peak", "ours B^T", "BLAS B^T", "ratio", "of peak");
  text += line;
  for (const Shape& s : kShapes) {
    auto ratio = [](double a, double b) { return b > 0 ? a / b : 0.0; };
    const double ours = reporter.gflops(run_name(Library::Ours, false, s));
    const double blas = reporter.gflops(run_name(Library::OpenBLAS, false, s));
    const double ours_t = reporter.gflops(run_name(Library::Ours, true, s));
    const double blas_t = reporter.gflops(run_name(Library::OpenBLAS, true, s));
    std::snprintf(line, sizeof line, "%-16s %8.1f %9.1f %6.2fx %8.2f %9.1f %9.1f %6.2fx %8.2f\n",
                  s.name().c_str(), ours, blas, ratio(ours, blas), ratio(ours, peak), ours_t,
                  blas_t, ratio(ours_t, blas_t), ratio(ours_t, peak));
    text += line;
    if (ours <= 0 && blas <= 0 && ours_t <= 0 && blas_t <= 0) continue;  // filtered out
    summary["shapes"][s.name()] = {{"ours", ours},
                                   {"openblas", blas},
                                   {"ours_trans_b", ours_t},
                                   {"openblas_trans_b", blas_t},
                                   {"ratio", ratio(ours, blas)},
                                   {"ratio_trans_b", ratio(ours_t, blas_t)},
                                   {"of_peak", ratio(ours, peak)},
                                   {"of_peak_trans_b", ratio(ours_t, peak)},
                                   {"openblas_of_avx2_peak", ratio(blas, avx2_peak)}};
    widen(summary["of_peak"], ratio(ours, peak));
    widen(summary["of_peak"], ratio(ours_t, peak));
    widen(summary["ratio"], ratio(ours, blas));
    widen(summary["openblas"]["gflops"], blas);
    widen(summary["openblas"]["of_avx2_peak"], ratio(blas, avx2_peak));
  }
  std::printf("\n%s", text.c_str());
  summary["table"] = pe::split_lines(text);
}

/// Prints the table of a Linear layer's products, each as a fraction of the peak, and records
/// it (summary["linear_table"]) and its numbers (summary["linear"]).
void print_linear_summary(const RecordingReporter& reporter, double peak, nlohmann::json& summary) {
  std::string text =
      "\nA Linear layer's products (ours, float32, single thread; fraction of the peak):\n";
  char line[256];
  std::snprintf(line, sizeof line, "%-16s %8s %8s %8s   (forward x [rows, in] W [in, out])\n",
                "rows x in x out", "x W", "dY W^T", "X^T dY");
  text += line;
  for (const LinearShape& s : kLinearShapes) {
    double of_peak[3] = {0, 0, 0};
    bool ran = false;
    for (std::size_t k = 0; k < 3; ++k) {
      const double gflops = reporter.gflops(linear_name(kLinearProducts[k], s));
      if (gflops <= 0) continue;  // filtered out
      ran = true;
      of_peak[k] = peak > 0 ? gflops / peak : 0.0;
      summary["linear"][s.name()][product_key(kLinearProducts[k])] = {{"gflops", gflops},
                                                                      {"of_peak", of_peak[k]}};
    }
    if (!ran) continue;
    std::snprintf(line, sizeof line, "%-16s %8.2f %8.2f %8.2f\n", s.name().c_str(), of_peak[0],
                  of_peak[1], of_peak[2]);
    text += line;
  }
  std::printf("%s", text.c_str());
  summary["linear_table"] = pe::split_lines(text);
}

/// Takes --summary=FILE or --summary FILE out of the arguments (the rest are the benchmark's);
/// "" when there is none.
std::string take_summary_option(int& argc, char** argv) {
  std::string file;
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--summary=", 10) == 0) {
      file = argv[i] + 10;
    } else if (std::strcmp(argv[i], "--summary") == 0 && i + 1 < argc) {
      file = argv[++i];
    } else {
      argv[kept++] = argv[i];
    }
  }
  argc = kept;
  argv[argc] = nullptr;
  return file;
}

}  // namespace

// The program itself; main runs it in the book's frame (base/program_frame.hpp).
static int program_main(int argc, char** argv) {
  // One thread everywhere: our gemm is single-threaded, so OpenBLAS must be as well.
  // The environment variables cover any pool created later; the calls cover the ones that
  // were already created when the libraries were loaded.
  setenv("OPENBLAS_NUM_THREADS", "1", 1);
  setenv("OMP_NUM_THREADS", "1", 1);
  if (openblas_set_num_threads) openblas_set_num_threads(1);
  ag::set_max_threads(1);

  for (const Shape& s : kShapes) {
    for (bool trans_b : {false, true}) {
      for (Library library : {Library::Ours, Library::OpenBLAS}) {
        // Rates use the benchmark thread's CPU time (the default), not wall time: on a
        // shared machine, time spent waiting for a core is not the kernel's.
        benchmark::RegisterBenchmark(run_name(library, trans_b, s).c_str(), run_matmul, library, s,
                                     trans_b)
            ->Unit(benchmark::kMillisecond);
      }
    }
  }

  for (const LinearShape& s : kLinearShapes) {
    for (LinearProduct product : kLinearProducts) {
      benchmark::RegisterBenchmark(linear_name(product, s).c_str(), run_linear, product, s)
          ->Unit(benchmark::kMillisecond);
    }
  }

  const std::string summary_path = take_summary_option(argc, argv);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return pe::kExitUsage;
  nlohmann::json summary = {
      {"program", "bench_matmul"},
      {"versions", pe::build_versions()},  // the commit, read as it starts
      {"machine", bench::machine()},
      {"simd", ag::kernels::simd_path_name()},
      {"openblas_core",
       openblas_get_corename && openblas_get_corename() ? openblas_get_corename() : "unknown"}};
  summary["machine"]["load_average"] = bench::load_average();  // how busy, as it starts
  std::unique_ptr<pe::StdoutCapture> capture;  // what it prints goes to the summary too
  if (!summary_path.empty()) capture = std::make_unique<pe::StdoutCapture>();
  // The peak before and after the gemm runs, the better of the two: load from other
  // processes can only lower it.
  std::vector<bench::Peak> peaks = bench::measure_fma_peaks(10);
  // Colours only on a terminal: a summary keeps the plain text.
  RecordingReporter reporter(isatty(STDOUT_FILENO) ? benchmark::ConsoleReporter::OO_ColorTabular
                                                   : benchmark::ConsoleReporter::OO_Tabular);
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  const std::vector<bench::Peak> after = bench::measure_fma_peaks(10);
  for (std::size_t i = 0; i < peaks.size() && i < after.size(); ++i)
    peaks[i].gflops = std::max(peaks[i].gflops, after[i].gflops);
  print_summary(reporter, peaks, summary);
  print_linear_summary(reporter, peaks.empty() ? 0.0 : peaks.front().gflops, summary);
  if (capture) {
    summary["output"] = pe::split_lines(capture->finish());
    try {
      ag::write_file_atomically(summary_path, summary.dump(1) + "\n");
    } catch (const std::exception& e) {
      std::cerr << "bench_matmul: " << e.what() << "\n";
      return 1;
    }
    std::cerr << "summary in " << summary_path << "\n";
  }
  return 0;
}

int main(int argc, char** argv) {
  return pe::run_program(
      "bench_matmul", [&] { return program_main(argc, argv); }, "measuring matmul");
}
