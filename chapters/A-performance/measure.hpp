// Appendix A's measurements: how fast this core can compute, how fast it can move data,
// and where each kernel of a training step sits between the two (the roofline).
//
// Everything is float32 on one thread (the gemm kernel is single-threaded; softmax and
// layer norm are run with one OpenMP thread), timed in the thread's CPU time and reported as
// the best of a few repetitions: other processes on the machine can only slow a run down.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace appendix_a {

/// How long to measure: each repetition runs a kernel for at least `min_seconds` of CPU time,
/// and the best of `repetitions` is kept.
struct Effort {
  int repetitions = 10;       ///< measurements, of which the best is kept
  double min_seconds = 0.05;  ///< CPU seconds a measurement lasts at least
};

/// One memory level's bandwidth, measured with the framework's axpy kernel (y += a x) on two
/// arrays that together take `working_set_bytes`: 12 bytes per element (read x and y, write y).
struct Bandwidth {
  std::string level;                  ///< "L2", "L3", "memory"
  std::size_t working_set_bytes = 0;  ///< bytes of x and y together
  double gbytes_per_second = 0;       ///< best measured bandwidth
};

/// L2-, L3- and memory-sized working sets (512 KiB, 8 MiB, `memory_bytes`).
std::vector<Bandwidth> measure_bandwidths(std::size_t memory_bytes, const Effort& effort);

/// One kernel call at a shape of the reference model, with its work and its compulsory memory
/// traffic (every input read once, every output written once), and the measured speed.
struct KernelPoint {
  std::string name;    ///< what it computes in the model, e.g. "gemm q/k/v/out"
  std::string shape;   ///< e.g. "2048x256x256"
  double flops = 0;    ///< per call
  double bytes = 0;    ///< per call, compulsory traffic
  double seconds = 0;  ///< per call, best repetition
  double intensity() const { return flops / bytes; }                   ///< flop per byte
  double gflops() const { return flops / seconds * 1e-9; }             ///< measured speed
  double gbytes_per_second() const { return bytes / seconds * 1e-9; }  ///< measured traffic
};

/// The kernels of one training step of the reference model (batch 64, length 32, width 256,
/// feed-forward 1024, one head, 26 letters), each timed alone on buffers of its shape.
std::vector<KernelPoint> measure_kernel_points(const Effort& effort);

/// A fused op against the same function written with primitive ops (ag::composite): forward
/// and backward through the autograd engine, milliseconds per call.
struct FusedVsComposite {
  std::string op;           ///< "softmax" or "layer_norm"
  std::string shape;        ///< the input's shape
  double fused_ms = 0;      ///< ms per forward and backward call of the fused op
  double composite_ms = 0;  ///< the same for the composite of primitive ops
};

/// softmax on the attention weights [64, 1, 32, 32] and layer_norm on the activations
/// [64, 32, 256] of the reference model.
std::vector<FusedVsComposite> measure_fused_vs_composite(const Effort& effort);

}  // namespace appendix_a
