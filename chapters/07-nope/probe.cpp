#include "chapters/07-nope/probe.hpp"

#include <algorithm>
#include <cmath>

#include "ag/error.hpp"

namespace pe {

void ProbeData::validate(const char* op) const {
  ag::check(rows >= 1 && cols >= 1, op, "needs at least one sample and one feature, got ", rows,
            " x ", cols);
  ag::check(std::int64_t(features.size()) == rows * cols, op, "features hold ", features.size(),
            " values, expected ", rows, " x ", cols, " = ", rows * cols);
  ag::check(std::int64_t(targets.size()) == rows, op, "there are ", targets.size(), " targets for ",
            rows, " samples");
}

// [cholesky]
std::vector<double> solve_symmetric_positive(std::vector<double> a, std::vector<double> b,
                                             std::int64_t n) {
  ag::check(n >= 1 && std::int64_t(a.size()) == n * n && std::int64_t(b.size()) == n,
            "solve_symmetric_positive", "expected a ", n, " x ", n, " matrix and ", n,
            " right-hand sides, got ", a.size(), " and ", b.size(), " values");
  // TASK 7.1 begin: solve the normal equations (Cholesky)
  // Overwrites the lower triangle of a with L, column by column: A = L L^T.
  for (std::int64_t j = 0; j < n; ++j) {
    double pivot = a[j * n + j];
    for (std::int64_t k = 0; k < j; ++k) pivot -= a[j * n + k] * a[j * n + k];
    ag::check(pivot > 0, "solve_symmetric_positive", "pivot ", j, " is ", pivot,
              ": the matrix is not positive definite (add a ridge)");
    const double l_jj = std::sqrt(pivot);
    a[j * n + j] = l_jj;
    for (std::int64_t i = j + 1; i < n; ++i) {
      double s = a[i * n + j];
      for (std::int64_t k = 0; k < j; ++k) s -= a[i * n + k] * a[j * n + k];
      a[i * n + j] = s / l_jj;
    }
  }
  // L z = b (forward), then L^T x = z (backward), both in place in b.
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t k = 0; k < i; ++k) b[i] -= a[i * n + k] * b[k];
    b[i] /= a[i * n + i];
  }
  for (std::int64_t i = n - 1; i >= 0; --i) {
    for (std::int64_t k = i + 1; k < n; ++k) b[i] -= a[k * n + i] * b[k];
    b[i] /= a[i * n + i];
  }
  return b;
  // TASK 7.1 end
}
// [cholesky]

// [fit-probe]
LinearProbe fit_linear_probe(const ProbeData& data, double ridge) {
  data.validate("fit_linear_probe");
  ag::check(data.rows >= 2, "fit_linear_probe", "needs at least 2 samples, got ", data.rows);
  ag::check(ridge >= 0 && std::isfinite(ridge), "fit_linear_probe",
            "ridge must be finite and >= 0, got ", ridge);
  // TASK 7.2 begin: fit the ridge probe
  const std::int64_t N = data.rows, C = data.cols;
  std::vector<double> mean_x(C, 0.0);
  double mean_y = 0;
  for (std::int64_t r = 0; r < N; ++r) {
    for (std::int64_t c = 0; c < C; ++c) mean_x[c] += data.features[r * C + c] / double(N);
    mean_y += data.targets[r] / double(N);
  }
  // Normal equations of the centred problem: G = Xc^T Xc / N + ridge I, h = Xc^T yc / N.
  std::vector<double> gram(C * C, 0.0), rhs(C, 0.0), centred(C);
  for (std::int64_t r = 0; r < N; ++r) {
    for (std::int64_t c = 0; c < C; ++c) centred[c] = data.features[r * C + c] - mean_x[c];
    const double y = data.targets[r] - mean_y;
    for (std::int64_t i = 0; i < C; ++i) {
      rhs[i] += centred[i] * y / double(N);
      for (std::int64_t j = 0; j <= i; ++j) gram[i * C + j] += centred[i] * centred[j] / double(N);
    }
  }
  for (std::int64_t i = 0; i < C; ++i) {
    gram[i * C + i] += ridge;
    for (std::int64_t j = 0; j < i; ++j) gram[j * C + i] = gram[i * C + j];  // symmetric
  }
  LinearProbe probe;
  probe.weights = solve_symmetric_positive(std::move(gram), std::move(rhs), C);
  // The line passes through the means: mean_y = mean_x . w + intercept.
  probe.intercept = mean_y;
  for (std::int64_t c = 0; c < C; ++c) probe.intercept -= mean_x[c] * probe.weights[c];
  return probe;
  // TASK 7.2 end
}
// [fit-probe]

std::vector<double> predict(const LinearProbe& probe, const ProbeData& data) {
  ag::check(data.rows >= 1 && std::int64_t(data.features.size()) == data.rows * data.cols,
            "predict", "features hold ", data.features.size(), " values, expected ", data.rows,
            " x ", data.cols);
  ag::check(std::int64_t(probe.weights.size()) == data.cols, "predict", "the probe reads ",
            probe.weights.size(), " features, the data has ", data.cols);
  std::vector<double> y(data.rows, probe.intercept);
  for (std::int64_t r = 0; r < data.rows; ++r)
    for (std::int64_t c = 0; c < data.cols; ++c)
      y[r] += data.features[r * data.cols + c] * probe.weights[c];
  return y;
}

ProbeScore score_probe(const LinearProbe& probe, const ProbeData& data) {
  data.validate("score_probe");
  const std::vector<double> y_hat = predict(probe, data);
  double mean = 0;
  for (double y : data.targets) mean += y / double(data.rows);
  double residual = 0, total = 0, absolute = 0;
  for (std::int64_t r = 0; r < data.rows; ++r) {
    const double e = data.targets[r] - y_hat[r];
    residual += e * e;
    absolute += std::abs(e);
    total += (data.targets[r] - mean) * (data.targets[r] - mean);
  }
  const auto [low, high] = std::minmax_element(data.targets.begin(), data.targets.end());
  ag::check(*low < *high, "score_probe", "all ", data.rows, " targets equal ", *low,
            ": R^2 is undefined");
  return {1.0 - residual / total, absolute / double(data.rows)};
}

}  // namespace pe
