#include "chapters/09-learned-distance/kerple.hpp"

#include <algorithm>
#include <cmath>

namespace pe {

using ag::Tensor;

KerpleForm kerple_form_from(const std::string& name) {
  if (name == "log") return KerpleForm::log;
  if (name == "power") return KerpleForm::power;
  throw ag::Error("kerple: option form must be log or power, got '" + name + "'");
}

std::string kerple_form_name(KerpleForm form) { return form == KerpleForm::log ? "log" : "power"; }

// [kerple-bias]
Tensor kerple_bias(KerpleForm form, const Tensor& r1, const Tensor& r2, std::int64_t queries,
                   std::int64_t keys, const Positions& q_positions) {
  ag::check(r1.dim() == 1 && r1.shape() == r2.shape(), "kerple",
            "expected r1 and r2 of one value per head [H], got ", ag::shape_string(r1.shape()),
            " and ", ag::shape_string(r2.shape()));
  const std::int64_t heads = r1.size(0);
  const Tensor d = ag::reshape(causal_distances(queries, keys, q_positions, r1.dtype()),
                               {1, queries, keys});  // the same distances for every head
  const Tensor a = ag::reshape(r1, {heads, 1, 1}), p = ag::reshape(r2, {heads, 1, 1});
  // TASK 9.1 begin: KERPLE's kernel and r2's parameterisation
  // log form: -r1 log(1 + r2 d); power form: -r1 d^r2 (0^r2 = 0 on the diagonal)
  const Tensor kernel = form == KerpleForm::log ? ag::log1p(ag::mul(p, d)) : ag::pow(d, p);
  // 0 - r1 k rather than -(r1 k), so that a distance of 0 gives +0, not -0
  return ag::sub(ag::zeros({1}, r1.dtype()), ag::mul(a, kernel));  // [H, Tq, Tk]
  // TASK 9.1 end
}
// [kerple-bias]

namespace {

// The inverses of the parameterisation: rho with softplus(rho) = r, and with 2 sigmoid(rho) = r.
// log(e^r - 1) = r + log(1 - e^-r), which stays finite for large r.
double inverse_softplus(double r) { return r + std::log(-std::expm1(-r)); }
double inverse_twice_sigmoid(double r) { return std::log(r / 2) - std::log1p(-r / 2); }

}  // namespace

KerpleBias::KerpleBias(std::int64_t heads, KerpleForm form_, ag::Rng& rng, ag::Dtype dtype)
    : form(form_) {
  ag::check(heads >= 1, "kerple", "needs at least one head, got ", heads);
  // The official code's draws: torch.rand(H) * scale, then clamped to at least eps = 0.01 (and
  // the power form's exponent to at most 2, which a draw below 2 never reaches).
  const double r1_scale = form == KerpleForm::log ? 2 : 1;
  const double r2_scale = form == KerpleForm::log ? 1 : 2;
  std::vector<double> r1_values, r2_values;
  for (std::int64_t h = 0; h < heads; ++h)
    r1_values.push_back(std::max(rng.uniform() * r1_scale, 0.01));
  for (std::int64_t h = 0; h < heads; ++h)
    r2_values.push_back(std::max(rng.uniform() * r2_scale, 0.01));
  rho1 = ag::zeros({heads}, dtype);
  rho2 = ag::zeros({heads}, dtype);
  set(r1_values, r2_values);
  register_parameter("rho1", rho1);
  register_parameter("rho2", rho2);
}

Tensor KerpleBias::r1() const { return ag::softplus(rho1); }

Tensor KerpleBias::r2() const {
  // TASK 9.1 begin: KERPLE's kernel and r2's parameterisation
  if (form == KerpleForm::log) return ag::softplus(rho2);
  return ag::mul(ag::sigmoid(rho2), 2.0);  // in (0, 2)
  // TASK 9.1 end
}

void KerpleBias::set(const std::vector<double>& r1_values, const std::vector<double>& r2_values) {
  const auto heads = static_cast<std::size_t>(rho1.size(0));
  ag::check(r1_values.size() == heads && r2_values.size() == heads, "kerple", "expected ", heads,
            " values of r1 and of r2, got ", r1_values.size(), " and ", r2_values.size());
  std::vector<double> raw1, raw2;
  for (std::size_t h = 0; h < heads; ++h) {
    const double a = r1_values[h], p = r2_values[h];
    ag::check(a > 0 && p > 0 && std::isfinite(a) && std::isfinite(p), "kerple",
              "r1 and r2 must be positive, got r1 ", a, " and r2 ", p, " for head ", h);
    ag::check(form == KerpleForm::log || p < 2, "kerple",
              "the power form's r2 = 2 sigmoid(rho2) lies below 2, got ", p);
    raw1.push_back(inverse_softplus(a));
    raw2.push_back(form == KerpleForm::log ? inverse_softplus(p) : inverse_twice_sigmoid(p));
  }
  rho1.copy_from(ag::from_vector(raw1, {rho1.size(0)}, ag::Dtype::f64));
  rho2.copy_from(ag::from_vector(raw2, {rho2.size(0)}, ag::Dtype::f64));
}

Tensor KerpleBias::bias(std::int64_t queries, std::int64_t keys,
                        const Positions& q_positions) const {
  return kerple_bias(form, r1(), r2(), queries, keys, q_positions);
}

KerpleEncoding::KerpleEncoding(std::int64_t heads, KerpleForm form, bool shared, ag::Rng& rng,
                               ag::Dtype dtype)
    : DistanceBiasEncoding(shared), heads_(heads), form_(form), dtype_(dtype) {
  ag::check(heads >= 1, "kerple", "needs at least one head, got ", heads);
  make_shared_function(rng);
}

std::shared_ptr<DistanceBias> KerpleEncoding::make_function(ag::Rng& rng) const {
  return std::make_shared<KerpleBias>(heads_, form_, rng, dtype_);
}

std::vector<std::pair<std::string, Tensor>> KerpleEncoding::inspect(std::int64_t length) const {
  std::vector<std::pair<std::string, Tensor>> out{
      {"distance", causal_distances(length, length, 0, ag::Dtype::f64)}};
  if (!shared()) return out;  // each layer's kernel lives in its part
  ag::NoGradGuard no_grad;
  const auto& kernel = static_cast<const KerpleBias&>(*shared_function());
  const Tensor r1 = kernel.r1().to(ag::Dtype::f64), r2 = kernel.r2().to(ag::Dtype::f64);
  out.push_back({"r1", r1});
  out.push_back({"r2", r2});
  out.push_back({"bias", kerple_bias(form_, r1, r2, length, length, 0)});
  return out;
}

}  // namespace pe
