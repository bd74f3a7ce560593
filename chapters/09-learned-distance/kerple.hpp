// KERPLE (Chi, Fan, Ramadge and Rudnicky, "Kernelized Relative Positional Embedding for Length
// Extrapolation", 2022): a bias that is a conditionally positive definite kernel of the
// distance d = i - j, with two learned positive numbers per head,
//   log form:    b(i, j) = -r1 log(1 + r2 d)
//   power form:  b(i, j) = -r1 d^r2,  0 < r2 <= 2.
// ALiBi is the power form with r2 = 1 and r1 its slope; the log form decays ever more slowly.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "chapters/09-learned-distance/distance_bias.hpp"

namespace pe {

/// Which kernel of the distance.
enum class KerpleForm {
  log,   ///< -r1 log(1 + r2 d): the paper's best on language modelling
  power  ///< -r1 d^r2, 0 < r2 <= 2
};

/// "log" or "power"; anything else is an ag::Error naming both.
KerpleForm kerple_form_from(const std::string& name);
/// The name kerple_form_from accepts for `form`.
std::string kerple_form_name(KerpleForm form);

/// bias[h, i, j] = -r1_h log(1 + r2_h d_ij) or -r1_h d_ij^r2_h with d = causal_distances, for
/// queries at q_positions .. q_positions+Tq-1 and keys at 0 .. Tk-1. Framework ops only, so the
/// gradient reaches r1 and r2.  r1, r2: [H] -> [H, Tq, Tk]
ag::Tensor kerple_bias(KerpleForm form, const ag::Tensor& r1, const ag::Tensor& r2,
                       std::int64_t queries, std::int64_t keys, const Positions& q_positions);

/// One KERPLE kernel: r1 and r2 for each head, kept positive by their parameterisation. The
/// official code clamps the raw values after each step (at least 0.01, and r2 at most 2 in
/// the power form); a clamp is outside the tape, so here the parameters are rho1, rho2 and
///   r1 = softplus(rho1),  r2 = softplus(rho2) (log form) or 2 sigmoid(rho2) (power form):
/// positive for every rho, and r2 < 2 in the power form.
class KerpleBias : public DistanceBias {
 public:
  /// Initial r1, r2 drawn as the official code draws them (a uniform draw times a scale,
  /// then its clamp): log form r1 ~ U(0, 2), r2 ~ U(0, 1); power form r1 ~ U(0, 1),
  /// r2 ~ U(0, 2); each at least 0.01.
  KerpleBias(std::int64_t heads, KerpleForm form, ag::Rng& rng, ag::Dtype dtype = ag::Dtype::f32);
  std::int64_t heads() const override { return rho1.size(0); }
  /// kerple_bias(form, r1(), r2(), ...).  -> [H, Tq, Tk]
  ag::Tensor bias(std::int64_t queries, std::int64_t keys,
                  const Positions& q_positions) const override;
  ag::Tensor r1() const;  ///< softplus(rho1): [H]
  ag::Tensor r2() const;  ///< softplus(rho2), or 2 sigmoid(rho2) in the power form: [H]
  /// Sets rho1, rho2 so that r1() and r2() give these values (one per head, positive; r2 < 2
  /// in the power form), keeping the parameters' handles and dtype.
  void set(const std::vector<double>& r1, const std::vector<double>& r2);

  const KerpleForm form;  ///< the kernel
  ag::Tensor rho1;        ///< [H], r1 = softplus(rho1)
  ag::Tensor rho2;        ///< [H], r2 = softplus(rho2) or 2 sigmoid(rho2)
};

/// KERPLE: one KerpleBias for every layer (the official code hands one module to all of them),
/// or, with shared = false, one per layer.
class KerpleEncoding : public DistanceBiasEncoding {
 public:
  /// \param heads H  \param form the kernel  \param shared one kernel for all layers
  /// \param rng the initial draws  \param dtype the parameters' element type
  KerpleEncoding(std::int64_t heads, KerpleForm form, bool shared, ag::Rng& rng,
                 ag::Dtype dtype = ag::Dtype::f32);
  std::string name() const override { return "kerple"; }
  /// "distance" [length, length]; when shared, also "r1" [H], "r2" [H] and "bias"
  /// [H, length, length] (the kernel's values as drawn, or as trained).
  std::vector<std::pair<std::string, ag::Tensor>> inspect(std::int64_t length) const override;
  KerpleForm form() const { return form_; }  ///< the kernel

 protected:
  std::shared_ptr<DistanceBias> make_function(ag::Rng& rng) const override;

 private:
  std::int64_t heads_;
  KerpleForm form_;
  ag::Dtype dtype_;
};

}  // namespace pe
