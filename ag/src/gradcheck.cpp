#include "ag/gradcheck.hpp"

#include <cmath>
#include <sstream>

#include "ag/ops.hpp"
#include "ag/random.hpp"
#include "ag/src/impl.hpp"

namespace ag {

namespace {

std::string index_string(std::int64_t flat, const Shape& shape) {
  std::vector<std::int64_t> index(shape.size());
  for (std::size_t i = shape.size(); i-- > 0;) {
    index[i] = shape[i] ? flat % shape[i] : 0;
    flat = shape[i] ? flat / shape[i] : 0;
  }
  return shape_string(index);
}

std::string input_label(std::size_t i, const Tensor& input) {
  std::ostringstream out;
  out << "input " << i;
  if (!input.name().empty()) out << " ('" << input.name() << "')";
  out << " of shape " << shape_string(input.shape());
  return out.str();
}

}  // namespace

GradcheckResult gradcheck(const Function& f, const std::vector<Tensor>& inputs,
                          const GradcheckOptions& options) {
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    check(inputs[i].dtype() == Dtype::f64, "gradcheck", input_label(i, inputs[i]), " is ",
          dtype_name(inputs[i].dtype()), "; finite differences need float64");
    check(inputs[i].is_leaf(), "gradcheck", input_label(i, inputs[i]), " is not a leaf");
  }
  std::vector<Tensor> xs = inputs;
  for (Tensor& x : xs) {
    x.set_requires_grad(true);
    x.zero_grad();
  }
  Rng rng(options.seed);
  Tensor weights;  // the fixed cotangent w, made on the first call
  auto loss = [&]() {
    Tensor out = f(xs);
    check(out.dtype() == Dtype::f64, "gradcheck", "the function returned ", dtype_name(out.dtype()),
          " values; it must compute in float64");
    if (!weights.defined()) weights = randn(out.shape(), rng, Dtype::f64);
    return sum(mul(out, weights));
  };
  loss().backward();

  GradcheckResult result;
  auto compare = [&](double analytic, double numeric, const std::string& where) {
    const double error = std::abs(analytic - numeric);
    ++result.checks;
    result.worst_error = std::max(result.worst_error, error);
    if (result.passed && !(error <= options.atol + options.rtol * std::abs(numeric))) {
      std::ostringstream out;
      out.precision(10);
      out << "gradcheck failed for " << where << ": analytic " << analytic << " vs numeric "
          << numeric << " (difference " << error << ", allowed "
          << options.atol + options.rtol * std::abs(numeric) << ")";
      result.passed = false;
      result.report = out.str();
    }
  };
  NoGradGuard no_grad;  // the perturbed evaluations need no tape
  for (std::size_t i = 0; i < xs.size(); ++i) {
    Tensor& x = xs[i];
    const Tensor grad = x.grad().defined() ? x.grad() : zeros(x.shape(), Dtype::f64);
    const double* g = grad.data<double>();
    double* v = x.data<double>();
    const std::int64_t n = x.numel();
    if (n <= options.full_limit) {
      // [central-difference]
      for (std::int64_t k = 0; k < n; ++k) {
        const double saved = v[k];
        v[k] = saved + options.eps;
        const double up = loss().item();
        v[k] = saved - options.eps;
        const double down = loss().item();
        v[k] = saved;
        compare(g[k], (up - down) / (2 * options.eps),
                input_label(i, x) + " at element " + index_string(k, x.shape()));
      }
      // [central-difference]
    } else {
      const std::vector<double> saved(v, v + n);
      for (int d = 0; d < options.directions; ++d) {
        std::vector<double> dir(static_cast<std::size_t>(n));
        double norm = 0;
        for (auto& e : dir) {
          e = rng.normal();
          norm += e * e;
        }
        norm = std::sqrt(norm);
        double analytic = 0;
        for (std::int64_t k = 0; k < n; ++k) analytic += g[k] * (dir[k] /= norm);
        for (std::int64_t k = 0; k < n; ++k) v[k] = saved[k] + options.eps * dir[k];
        const double up = loss().item();
        for (std::int64_t k = 0; k < n; ++k) v[k] = saved[k] - options.eps * dir[k];
        const double down = loss().item();
        std::copy(saved.begin(), saved.end(), v);
        compare(analytic, (up - down) / (2 * options.eps),
                input_label(i, x) + " along random direction " + std::to_string(d));
      }
    }
  }
  return result;
}

}  // namespace ag
