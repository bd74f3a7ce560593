// Gradient checking: analytic gradients against central differences, in float64.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ag/tensor.hpp"

namespace ag {

/// PyTorch's defaults. An element passes when |analytic - numeric| <= atol + rtol |numeric|.
struct GradcheckOptions {
  double eps = 1e-6;   ///< the step h of the central difference (f(x+h) - f(x-h)) / 2h
  double atol = 1e-5;  ///< absolute tolerance
  double rtol = 1e-3;  ///< relative tolerance
  /// Inputs with at most this many elements are checked element by element (a full row of
  /// the Jacobian); larger ones along `directions` random unit directions.
  std::int64_t full_limit = 400;
  int directions = 6;         ///< random directions per large input
  std::uint64_t seed = 1234;  ///< for the directions and the output weights w
};

/// What gradcheck found.
struct GradcheckResult {
  bool passed = true;       ///< every checked element within tolerance
  std::string report;       ///< on failure: the input, the element and both values
  double worst_error = 0;   ///< largest |analytic - numeric| seen
  std::int64_t checks = 0;  ///< elements and directions compared
};

/// A function of several tensors, as gradcheck takes it.
using Function = std::function<Tensor(const std::vector<Tensor>&)>;

/// Checks the gradients of f with respect to each input. Inputs must be float64 leaves; they
/// are marked as requiring gradients for the check. A non-scalar output is reduced to the
/// scalar sum(f(x) * w) with a fixed random w, so every output element takes part.
GradcheckResult gradcheck(const Function& f, const std::vector<Tensor>& inputs,
                          const GradcheckOptions& options = {});

}  // namespace ag
