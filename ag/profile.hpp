// Where the time of a training step goes: each op's forward and each backward rule, timed
// by op name, like PyTorch's profiler table. Off by default; an op then pays one load of a
// flag. Only the outermost timed region counts, so that the rows add up to no more than the
// wall time (an op called inside a backward rule belongs to that rule).
// Beside the ops, every call of the gemm kernel from an op is counted by the kind of product
// (x W, dY W^T, X^T dY), with its multiply-add FLOPs and its own time: how fast each kind ran
// inside the step.
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

/// The three forms of matrix product the ops call the gemm kernel with; a Linear layer's
/// forward, and the two products of its backward rule (matmul's likewise).
enum class ProductKind {
  xW,    ///< op(A) op(B) = A B, neither transposed (the forward x W)
  dYWt,  ///< A B^T, B transposed (dX = dY W^T)
  XtdY   ///< A^T B, A transposed (dW = X^T dY)
};

/// "xW", "dYWt" or "XtdY": a name for keys (e.g. in JSON).
const char* product_key(ProductKind kind);
/// "x W", "dY W^T" or "X^T dY": a name for tables.
const char* product_name(ProductKind kind);

/// The products of one kind since start(): calls of the gemm kernel (a batched call counts
/// once), their multiply-add FLOPs (2 M N K per product, times the batch) and their time.
struct ProductTotals {
  ProductKind kind = ProductKind::xW;  ///< which form
  std::int64_t calls = 0;              ///< kernel calls
  double flops = 0;                    ///< 2 M N K batch, summed over the calls
  std::int64_t ns = 0;                 ///< nanoseconds inside the kernel calls (wall time)
};

/// The counts of one start() .. stop() interval.
struct Report {
  std::vector<OpTime> rows;             ///< by time, longest first
  double wall_ms = 0;                   ///< from start() to stop()
  std::vector<ProductTotals> products;  ///< one per kind that ran, in ProductKind's order
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
/// The product totals counted since start() so far, one per kind that ran (stop() puts the
/// same in its Report).
std::vector<ProductTotals> product_totals();

namespace detail {
extern std::atomic<bool> g_on;
void begin(const char* op, Phase phase, bool& outermost, std::int64_t& start_ns);
void end(const char* op, Phase phase, std::int64_t start_ns);
std::int64_t now_ns();
void add_product(ProductKind kind, double flops, std::int64_t ns);
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

/// Counts one call of the gemm kernel of `kind` that computes `batch` products of
/// [M, K] x [K, N], timing the enclosing block (only while profiling is on). Thread-safe: calls
/// from several threads add up. Put it around the kernel call alone, not the op.
class ProductScope {
 public:
  /// Starts timing the call (only while profiling is on); the destructor counts it.
  ProductScope(ProductKind kind, std::int64_t batch, std::int64_t M, std::int64_t N, std::int64_t K)
      : kind_(kind) {
    if (detail::g_on.load(std::memory_order_relaxed)) {
      flops_ = 2.0 * double(M) * double(N) * double(K) * double(batch);
      start_ns_ = detail::now_ns();
      active_ = true;
    }
  }
  ~ProductScope() {
    if (active_) detail::add_product(kind_, flops_, detail::now_ns() - start_ns_);
  }
  ProductScope(const ProductScope&) = delete;
  ProductScope& operator=(const ProductScope&) = delete;

 private:
  ProductKind kind_;
  bool active_ = false;
  double flops_ = 0;
  std::int64_t start_ns_ = 0;
};

}  // namespace ag::profile
