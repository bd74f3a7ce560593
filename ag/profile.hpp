// Where the time of a training step goes: each op's forward and each backward rule, timed
// by op name, like PyTorch's profiler table. Off by default; an op then pays one load of a
// flag. Only the outermost timed region counts, so that the rows add up to no more than the
// wall time (an op called inside a backward rule belongs to that rule).
#pragma once
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

namespace ag::profile {

/// Which part of a training step a timed region belongs to.
enum class Phase {
  forward,    ///< an op computing its output
  backward,   ///< a backward rule
  optimizer,  ///< the optimiser's update
  other       ///< anything else timed (data, evaluation)
};

/// One row: an op (or region) in one phase, over every call since start().
struct OpTime {
  std::string op;          ///< the op's name, e.g. "matmul"
  Phase phase;             ///< forward, backward, ...
  std::int64_t calls = 0;  ///< how often it ran
  double ms = 0;           ///< total milliseconds, outermost regions only
};

/// The counts of one start() .. stop() interval.
struct Report {
  std::vector<OpTime> rows;  ///< by time, longest first
  double wall_ms = 0;        ///< from start() to stop()
};

/// Clears earlier counts and starts timing.
void start();
/// Stops timing and returns what was counted since start().
Report stop();
/// The report as a table: op, phase, calls, total ms, share of the wall time; then the share
/// spent in matrix products (matmul, matmul_transposed, transpose_matmul and linear, forward
/// and backward) and outside any timed region. `steps` only divides the totals for a per-step line.
std::string format(const Report& report, std::int64_t steps);
/// True for the matrix-product ops (the gemm kernel's callers; linear with its bias and ReLU).
bool is_gemm(const std::string& op);

namespace detail {
extern std::atomic<bool> g_on;
void begin(const char* op, Phase phase, bool& outermost, std::int64_t& start_ns);
void end(const char* op, Phase phase, std::int64_t start_ns);
}  // namespace detail

/// Times the enclosing block as `op` in `phase` while profiling is on. `op` must outlive the
/// scope.
class Scope {
 public:
  /// Starts timing `op` in `phase` (only while profiling is on); the destructor stops it.
  explicit Scope(const char* op, Phase phase = Phase::forward) : op_(op), phase_(phase) {
    if (detail::g_on.load(std::memory_order_relaxed)) {
      active_ = true;
      detail::begin(op_, phase_, outermost_, start_ns_);
    }
  }
  ~Scope() {
    if (active_) {
      if (outermost_)
        detail::end(op_, phase_, start_ns_);
      else
        detail::end(nullptr, phase_, 0);
    }
  }
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

 private:
  const char* op_;
  Phase phase_;
  bool active_ = false, outermost_ = false;
  std::int64_t start_ns_ = 0;
};

}  // namespace ag::profile
