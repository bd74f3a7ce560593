// Appendix A's experiment: the roofline of this machine, measured.
//
//   chA_experiment [--out DIR] [--repetitions N] [--min-ms MS] [--memory-mib MIB] [--summary FILE]
//
// Prints, all float32 on one thread: the FMA peak per instruction set
// (programs/bench/peak_fma.cpp), the bandwidth of L1, L2 and memory (the axpy kernel), each kernel
// of a training step of the reference model at its own shape (work, compulsory traffic, intensity,
// time, GFLOP/s, GB/s), and the fused softmax and layer norm against their composites. Writes the
// same numbers as CSV files and the roofline figure (when gnuplot is there) to DIR, and the
// summary the appendix quotes (DIR/summary.json unless --summary names another file: the
// book's copy is chapters/A-performance/results/summary.json): what it printed, and each number
// by name (peak.avx512, kernels.[gemm head].of_peak, large_gemms.of_peak.min, ...).

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "ag/error.hpp"
#include "ag/files.hpp"
#include "ag/kernels/dispatch.hpp"
#include "ag/threads.hpp"
#include "base/build_record.hpp"
#include "base/command_line.hpp"
#include "base/folder_lock.hpp"
#include "base/program_frame.hpp"
#include "base/stdout_capture.hpp"
#include "chapters/A-performance/measure.hpp"
#include "chapters/A-performance/roofline_figure.hpp"
#include "lab/figures.hpp"
#include "programs/bench/peak_fma.hpp"

namespace {

struct Options {
  std::string out = "results/chA";
  int repetitions = 10;
  int min_ms = 50;
  int memory_mib = 256;
  std::string summary = "";  // empty: out/summary.json
};

// A CSV file built in memory and written whole (ag::write_file_atomically) when it is done,
// so that a failure or a kill never leaves half a table under its name.
struct Csv {
  std::string path;
  std::ostringstream text;
  Csv(std::string file, const char* header) : path(std::move(file)) { text << header << "\n"; }
  template <class T>
  Csv& operator<<(const T& value) {
    text << value;
    return *this;
  }
  void write() const { ag::write_file_atomically(path, text.str()); }
};

}  // namespace

// The experiment itself; main runs it in the book's frame (base/program_frame.hpp).
static int experiment_main(int argc, char** argv) {
  Options options;
  CLI::App app{"Appendix A: the roofline of this machine, measured (float32, one thread).",
               "chA_experiment"};
  app.add_option("--out", options.out, "folder for the CSV files and roofline.png")
      ->capture_default_str()
      ->check(pe::not_empty("a folder"));
  app.add_option("--repetitions", options.repetitions, "repetitions per measurement (best kept)")
      ->capture_default_str()
      ->check(pe::whole_number(1, 10000));
  app.add_option("--min-ms", options.min_ms, "CPU milliseconds per repetition, at least")
      ->capture_default_str()
      ->check(pe::whole_number(1, 60000));
  app.add_option("--memory-mib", options.memory_mib,
                 "working set of the memory-bandwidth measurement (far larger than the caches)")
      ->capture_default_str()
      ->check(pe::whole_number(1, 65536));
  app.add_option("--summary", options.summary,
                 "file for the summary of the numbers the appendix quotes (default: "
                 "<out>/summary.json)")
      ->check(pe::not_empty("a file"));
  if (const auto status = pe::parse_command_line(app, argc, argv)) return *status;
  ag::set_max_threads(1);
  const pe::FolderLock lock(options.out, "");  // one writer: a second one is refused at once
  pe::source_commit();  // read as the run starts: the summary names the sources it ran
  const appendix_a::Effort effort{options.repetitions, options.min_ms * 1e-3};
  nlohmann::json summary = {{"experiment", "chA_experiment"},
                            {"repetitions", options.repetitions},
                            {"min_ms", options.min_ms},
                            {"memory_mib", options.memory_mib},
                            {"versions", pe::build_versions()}};
  // The CPU the numbers were measured on, and how busy it was as the run started.
  summary["machine"] = bench::machine();
  summary["machine"]["load_average"] = bench::load_average();
  pe::StdoutCapture capture;  // what it prints goes to the summary too
  std::printf("SIMD path of the kernels: %s; float32, one thread, best of %d repetitions\n",
              ag::kernels::simd_path_name(), options.repetitions);

  const std::vector<bench::Peak> peaks = bench::measure_fma_peaks(options.repetitions);
  std::printf("\npeak (register-only multiply-add loop):\n");
  Csv peaks_csv(options.out + "/peaks.csv", "isa,gflops");
  for (const bench::Peak& p : peaks) {
    std::printf("  %-8s %7.1f GFLOP/s\n", p.isa.c_str(), p.gflops);
    peaks_csv << p.isa << "," << p.gflops << "\n";
    summary["peak"][p.isa] = p.gflops;
  }
  peaks_csv.write();

  const auto bandwidths =
      appendix_a::measure_bandwidths(std::size_t(options.memory_mib) << 20, effort);
  std::printf("\nbandwidth (axpy, y += a x, 12 bytes per element):\n");
  Csv bandwidth_csv(options.out + "/bandwidth.csv", "level,working_set_bytes,gbps");
  for (const auto& b : bandwidths) {
    std::printf("  %-8s %9.0f KiB %7.1f GB/s\n", b.level.c_str(), b.working_set_bytes / 1024.0,
                b.gbytes_per_second);
    bandwidth_csv << b.level << "," << b.working_set_bytes << "," << b.gbytes_per_second << "\n";
    summary["bandwidth"][b.level] = b.gbytes_per_second;
  }
  bandwidth_csv.write();
  if (!peaks.empty() && !bandwidths.empty()) {
    std::printf("  ridge point against memory: %.1f flop/byte (%s peak / memory bandwidth)\n",
                peaks.front().gflops / bandwidths.back().gbytes_per_second,
                peaks.front().isa.c_str());
    summary["ridge"] = peaks.front().gflops / bandwidths.back().gbytes_per_second;
  }
  // The peak of the instruction set the kernels run on: a kernel's share of what its code
  // could reach.
  double kernels_peak = 0;
  for (const bench::Peak& p : peaks)
    if (p.isa == ag::kernels::simd_path_name()) kernels_peak = p.gflops;

  const auto points = appendix_a::measure_kernel_points(effort);
  std::printf("\nkernels of one training step, each alone at its shape:\n");
  std::printf("  %-20s %-18s %8s %8s %9s %9s %8s %7s\n", "kernel", "shape", "MFLOP", "MB", "flop/B",
              "us/call", "GFLOP/s", "GB/s");
  Csv kernels_csv(options.out + "/kernels.csv",
                  "kernel,shape,flops,bytes,intensity,seconds,gflops,gbps");
  for (const auto& p : points) {
    std::printf("  %-20s %-18s %8.2f %8.2f %9.2f %9.1f %8.1f %7.1f\n", p.name.c_str(),
                p.shape.c_str(), p.flops * 1e-6, p.bytes * 1e-6, p.intensity(), p.seconds * 1e6,
                p.gflops(), p.gbytes_per_second());
    kernels_csv << p.name << "," << p.shape << "," << p.flops << "," << p.bytes << ","
                << p.intensity() << "," << p.seconds << "," << p.gflops() << ","
                << p.gbytes_per_second() << "\n";
    nlohmann::json& kernel = summary["kernels"][p.name];
    kernel = {{"shape", p.shape},
              {"mflop", p.flops * 1e-6},
              {"mb", p.bytes * 1e-6},
              {"intensity", p.intensity()},
              {"us", p.seconds * 1e6},
              {"gflops", p.gflops()},
              {"gbs", p.gbytes_per_second()}};
    if (kernels_peak > 0) kernel["of_peak"] = p.gflops() / kernels_peak;
  }
  kernels_csv.write();
  // The four large products (the layers' own, width 256 and 1024), whose range the text
  // quotes as one claim: the lowest and highest share of the peak and speed among them.
  const char* const large[] = {"gemm q/k/v/out", "gemm ffn expand", "gemm ffn contract",
                               "gemm weight grad"};
  for (const char* name : large) {
    if (!summary["kernels"].contains(name)) continue;
    const nlohmann::json& kernel = summary["kernels"][name];
    for (const char* field : {"gflops", "of_peak"}) {
      if (!kernel.contains(field)) continue;
      const double value = kernel[field].get<double>();
      nlohmann::json& range = summary["large_gemms"][field];
      range["min"] = range.contains("min") ? std::min(range["min"].get<double>(), value) : value;
      range["max"] = range.contains("max") ? std::max(range["max"].get<double>(), value) : value;
    }
  }

  const auto fused = appendix_a::measure_fused_vs_composite(effort);
  std::printf("\nfused kernel against primitive ops (forward + backward through the engine):\n");
  std::printf("  %-12s %-12s %10s %13s %8s\n", "op", "input", "fused ms", "composite ms",
              "speed-up");
  Csv fused_csv(options.out + "/fused.csv", "op,shape,fused_ms,composite_ms");
  for (const auto& f : fused) {
    std::printf("  %-12s %-12s %10.3f %13.3f %7.1fx\n", f.op.c_str(), f.shape.c_str(), f.fused_ms,
                f.composite_ms, f.composite_ms / f.fused_ms);
    fused_csv << f.op << "," << f.shape << "," << f.fused_ms << "," << f.composite_ms << "\n";
    summary["fused"][f.op] = {{"fused_ms", f.fused_ms},
                              {"composite_ms", f.composite_ms},
                              {"speedup", f.composite_ms / f.fused_ms}};
  }
  fused_csv.write();

  const std::string png = options.out + "/roofline.png";
  if (pe::gnuplot_available()) {
    appendix_a::write_roofline(png, peaks, bandwidths, points);
    std::printf("\nwrote %s and the CSV files in %s\n", png.c_str(), options.out.c_str());
  } else {
    std::printf("\ngnuplot not found: no figure; the CSV files are in %s\n", options.out.c_str());
  }
  summary["output"] = pe::split_lines(capture.finish());
  const std::string summary_path =
      options.summary.empty() ? options.out + "/summary.json" : options.summary;
  ag::write_file_atomically(summary_path, summary.dump(1) + "\n");
  std::cerr << "summary of the quoted results in " << summary_path << "\n";
  return 0;
}

int main(int argc, char** argv) {
  return pe::run_program(
      "chA_experiment", [&] { return experiment_main(argc, argv); }, "measuring the roofline");
}
