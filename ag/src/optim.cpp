#include "ag/optim.hpp"

#include <cmath>

#include "ag/profile.hpp"
#include "ag/src/impl.hpp"
#include "ag/threads.hpp"

namespace ag {

Optimizer::Optimizer(std::vector<Tensor> parameters, double lr_)
    : lr(lr_), parameters_(std::move(parameters)) {
  check(lr_ >= 0, "Optimizer", "learning rate must be non-negative, got ", lr_);
  for (const Tensor& p : parameters_)
    check(p.is_leaf() && p.requires_grad(), "Optimizer",
          "every parameter must be a leaf that requires a gradient ('", p.name(), "' is not)");
}

void Optimizer::zero_grad() {
  profile::Scope profile_scope("zero_grad", profile::Phase::optimizer);
  for (Tensor& p : parameters_) p.zero_grad();
}

SGD::SGD(std::vector<Tensor> parameters, double lr, double momentum, double weight_decay)
    : Optimizer(std::move(parameters), lr), momentum_(momentum), weight_decay_(weight_decay) {
  for (const Tensor& p : parameters_) velocity_.push_back(zeros(p.shape(), p.dtype()));
}

void SGD::step() {
  profile::Scope profile_scope("sgd step", profile::Phase::optimizer);
  for (std::size_t i = 0; i < parameters_.size(); ++i) {
    Tensor& p = parameters_[i];
    if (!p.grad().defined()) continue;
    dispatch(p.dtype(), [&](auto t) {
      using T = decltype(t);
      T* w = p.data<T>();
      const T* g = p.grad().data<T>();
      T* v = velocity_[i].data<T>();
      for (std::int64_t k = 0, n = p.numel(); k < n; ++k) {
        v[k] = T(momentum_) * v[k] + g[k] + T(weight_decay_) * w[k];
        w[k] -= T(lr) * v[k];
      }
    });
  }
}

Adam::Adam(std::vector<Tensor> parameters, double lr, double beta1, double beta2, double eps,
           double weight_decay, bool decoupled)
    : Optimizer(std::move(parameters), lr),
      beta1_(beta1),
      beta2_(beta2),
      eps_(eps),
      weight_decay_(weight_decay),
      decoupled_(decoupled) {
  check(0 <= beta1 && beta1 < 1 && 0 <= beta2 && beta2 < 1, "Adam",
        "betas must lie in [0, 1), got ", beta1, " and ", beta2);
  for (const Tensor& p : parameters_) {
    m_.push_back(zeros(p.shape(), p.dtype()));
    v_.push_back(zeros(p.shape(), p.dtype()));
  }
}

void Adam::step() {
  profile::Scope profile_scope("adam step", profile::Phase::optimizer);
  ++t_;
  // Bias correction folded into the step size: lr_t = lr * sqrt(1 - b2^t) / (1 - b1^t).
  const double c1 = 1.0 - std::pow(beta1_, double(t_));
  const double c2 = 1.0 - std::pow(beta2_, double(t_));
  for (std::size_t i = 0; i < parameters_.size(); ++i) {
    Tensor& p = parameters_[i];
    if (!p.grad().defined()) continue;
    dispatch(p.dtype(), [&](auto t) {
      using T = decltype(t);
      T* w = p.data<T>();
      const T* g = p.grad().data<T>();
      T* m = m_[i].data<T>();
      T* v = v_[i].data<T>();
      const T b1 = T(beta1_), b2 = T(beta2_), step = T(lr / c1), root_c2 = T(std::sqrt(c2));
      const T decay = decoupled_ ? T(lr * weight_decay_) : T(0);
      const T l2 = decoupled_ ? T(0) : T(weight_decay_), eps = T(eps_);
      // Each element's update reads and writes only that element: any split between threads
      // gives the same bits. (Memory-bound: four arrays read, three written.)
      const std::int64_t n = p.numel();
#pragma omp parallel for schedule(static) if (n >= kParallelElements)
      for (std::int64_t k = 0; k < n; ++k) {
        const T grad = g[k] + l2 * w[k];
        m[k] = b1 * m[k] + (T(1) - b1) * grad;
        v[k] = b2 * v[k] + (T(1) - b2) * grad * grad;
        w[k] -= decay * w[k];
        w[k] -= step * m[k] / (std::sqrt(v[k]) / root_c2 + eps);
      }
    });
  }
}

void Adam::set_state(const State& state) {
  check(state.m.size() == parameters_.size() && state.v.size() == parameters_.size(),
        "Adam::set_state", "state for ", state.m.size(), " parameters, optimiser has ",
        parameters_.size());
  for (std::size_t i = 0; i < parameters_.size(); ++i) {
    check(state.m[i].shape() == parameters_[i].shape() &&
              state.v[i].shape() == parameters_[i].shape(),
          "Adam::set_state", "moment ", i, " has shape ", shape_string(state.m[i].shape()),
          ", parameter has ", shape_string(parameters_[i].shape()));
    m_[i].copy_from(state.m[i]);
    v_[i].copy_from(state.v[i]);
  }
  t_ = state.t;
}

double clip_grad_norm(const std::vector<Tensor>& parameters, double max_norm) {
  profile::Scope profile_scope("clip_grad_norm", profile::Phase::optimizer);
  check(max_norm > 0, "clip_grad_norm", "max_norm must be positive, got ", max_norm);
  double total = 0;
  for (const Tensor& p : parameters) {
    if (!p.grad().defined()) continue;
    const Tensor g = p.grad();
    dispatch(g.dtype(), [&](auto t) {
      using T = decltype(t);
      const T* d = g.data<T>();
      double sum = 0;  // in double: a float sum of 300k squares loses digits
      for (std::int64_t k = 0, n = g.numel(); k < n; ++k) sum += double(d[k]) * double(d[k]);
      total += sum;
    });
  }
  const double norm = std::sqrt(total);
  if (norm > max_norm) {
    const double scale = max_norm / (norm + 1e-6);
    for (const Tensor& p : parameters) {
      if (!p.grad().defined()) continue;
      Tensor g = p.grad();
      dispatch(g.dtype(), [&](auto t) {
        using T = decltype(t);
        T* d = g.data<T>();
        for (std::int64_t k = 0, n = g.numel(); k < n; ++k) d[k] *= T(scale);
      });
    }
  }
  return norm;
}

}  // namespace ag
