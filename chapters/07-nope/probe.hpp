// A linear probe: ridge regression from feature vectors to one number, fitted in closed form
// in double precision. Chapter 7 uses it to ask how much of a token's position a layer's
// hidden state carries in a form a straight line can read.
#pragma once
#include <cstdint>
#include <vector>

namespace pe {

/// N samples of C features each (row-major [N, C]) and one target per sample ([N]).
struct ProbeData {
  std::vector<double> features;  ///< [N, C], row-major
  std::vector<double> targets;   ///< [N]
  std::int64_t rows = 0;         ///< N
  std::int64_t cols = 0;         ///< C

  /// Throws ag::Error naming the sizes unless features has rows * cols entries, targets has
  /// rows, and rows, cols >= 1.
  void validate(const char* op) const;
};

/// y_hat = x . weights + intercept.
struct LinearProbe {
  std::vector<double> weights;  ///< [C]
  double intercept = 0;         ///< the constant term
};

/// How well a probe predicts held-out targets.
struct ProbeScore {
  double r2 = 0;   ///< 1 - sum (y - y_hat)^2 / sum (y - mean y)^2; 1 is perfect, 0 is "the mean"
  double mae = 0;  ///< mean |y - y_hat|, in the target's units (positions)
};

/// Solves A x = b for a symmetric positive definite n x n matrix A (row-major) by Cholesky,
/// A = L L^T. Throws ag::Error if a pivot is not positive (A is not positive definite).
std::vector<double> solve_symmetric_positive(std::vector<double> a, std::vector<double> b,
                                             std::int64_t n);

/// Ridge regression: centres features and targets on the data's means (so the intercept is
/// not penalised) and solves (Xc^T Xc / N + ridge I) w = Xc^T yc / N. Needs at least two
/// samples; ridge must be >= 0 (0 is plain least squares and needs independent features).
LinearProbe fit_linear_probe(const ProbeData& data, double ridge);

/// y_hat for every row of data (its targets are not read). data.cols must match the probe.
std::vector<double> predict(const LinearProbe& probe, const ProbeData& data);

/// R^2 and mean absolute error of the probe on data. Throws if the targets are all equal
/// (R^2 is undefined then).
ProbeScore score_probe(const LinearProbe& probe, const ProbeData& data);

}  // namespace pe
