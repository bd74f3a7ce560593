#include "ag/profile.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <utility>

namespace ag::profile {

namespace detail {

std::atomic<bool> g_on{false};

namespace {

struct Totals {
  std::int64_t calls = 0, ns = 0;
};

constexpr std::size_t kProductKinds = 3;

std::mutex g_mutex;
std::map<std::pair<Phase, std::string>, Totals> g_totals;
ProductTotals g_products[kProductKinds];  // by ProductKind
std::int64_t g_start_ns = 0;
thread_local int t_depth = 0;  // timed regions open on this thread

// The kinds that ran, in ProductKind's order; g_mutex held.
std::vector<ProductTotals> products_locked() {
  std::vector<ProductTotals> out;
  for (const ProductTotals& p : g_products)
    if (p.calls > 0) out.push_back(p);
  return out;
}

}  // namespace

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void add_product(ProductKind kind, double flops, std::int64_t ns) {
  std::lock_guard<std::mutex> lock(g_mutex);
  ProductTotals& totals = g_products[static_cast<std::size_t>(kind)];
  totals.kind = kind;
  ++totals.calls;
  totals.flops += flops;
  totals.ns += ns;
}

void begin(const char*, Phase, bool& outermost, std::int64_t& start_ns) {
  outermost = t_depth++ == 0;
  if (outermost) start_ns = now_ns();
}

void end(const char* op, Phase phase, std::int64_t start_ns) {
  --t_depth;
  if (!op) return;  // a nested region: its time belongs to the one around it
  const std::int64_t elapsed = now_ns() - start_ns;
  std::lock_guard<std::mutex> lock(g_mutex);
  Totals& totals = g_totals[{phase, op}];
  ++totals.calls;
  totals.ns += elapsed;
}

}  // namespace detail

void start() {
  std::lock_guard<std::mutex> lock(detail::g_mutex);
  detail::g_totals.clear();
  for (ProductTotals& p : detail::g_products) p = ProductTotals{};
  detail::g_start_ns = detail::now_ns();
  detail::g_on.store(true);
}

Report stop() {
  detail::g_on.store(false);
  std::lock_guard<std::mutex> lock(detail::g_mutex);
  Report report;
  report.wall_ms = double(detail::now_ns() - detail::g_start_ns) / 1e6;
  for (const auto& [key, totals] : detail::g_totals)
    report.rows.push_back({key.second, key.first, totals.calls, double(totals.ns) / 1e6});
  std::stable_sort(report.rows.begin(), report.rows.end(),
                   [](const OpTime& a, const OpTime& b) { return a.ms > b.ms; });
  report.products = detail::products_locked();
  return report;
}

std::vector<ProductTotals> product_totals() {
  std::lock_guard<std::mutex> lock(detail::g_mutex);
  return detail::products_locked();
}

const char* product_key(ProductKind kind) {
  switch (kind) {
    case ProductKind::xW:
      return "xW";
    case ProductKind::dYWt:
      return "dYWt";
    case ProductKind::XtdY:
      return "XtdY";
  }
  return "?";
}

const char* product_name(ProductKind kind) {
  switch (kind) {
    case ProductKind::xW:
      return "x W";
    case ProductKind::dYWt:
      return "dY W^T";
    case ProductKind::XtdY:
      return "X^T dY";
  }
  return "?";
}

bool is_gemm(const std::string& op) {
  return op == "matmul" || op == "matmul_transposed" || op == "transpose_matmul" || op == "linear";
}

namespace {
const char* phase_name(Phase phase) {
  switch (phase) {
    case Phase::forward:
      return "forward";
    case Phase::backward:
      return "backward";
    case Phase::optimizer:
      return "optimizer";
    case Phase::other:
      return "other";
  }
  return "?";
}
}  // namespace

std::string format(const Report& report, std::int64_t steps) {
  const double wall = report.wall_ms > 0 ? report.wall_ms : 1;
  std::string out;
  char line[200];
  std::snprintf(line, sizeof line, "%-26s %-9s %9s %11s %8s %7s\n", "op", "phase", "calls",
                "total ms", "ms/step", "share");
  out += line;
  out += std::string(75, '-') + "\n";
  double timed = 0, gemm = 0;
  const double per = steps > 0 ? double(steps) : 1;
  for (const OpTime& row : report.rows) {
    std::snprintf(line, sizeof line, "%-26s %-9s %9ld %11.1f %8.2f %6.1f%%\n", row.op.c_str(),
                  phase_name(row.phase), long(row.calls), row.ms, row.ms / per,
                  100 * row.ms / wall);
    out += line;
    timed += row.ms;
    if (is_gemm(row.op)) gemm += row.ms;
  }
  out += std::string(75, '-') + "\n";
  const double outside = std::max(0.0, report.wall_ms - timed);
  std::snprintf(line, sizeof line, "%-36s %21.1f %8.2f %6.1f%%\n", "outside any timed op", outside,
                outside / per, 100 * outside / wall);
  out += line;
  std::snprintf(line, sizeof line, "%-36s %21.1f %8.2f %6.1f%%\n", "wall time", report.wall_ms,
                report.wall_ms / per, 100.0);
  out += line;
  std::snprintf(line, sizeof line,
                "matrix products (matmul, matmul_transposed, transpose_matmul, linear; forward "
                "and backward): %.1f%% of the wall time\n",
                100 * gemm / wall);
  out += line;
  return out;
}

}  // namespace ag::profile
