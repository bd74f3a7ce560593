// Optimisers update parameters in place from their accumulated gradients.
#pragma once
#include <vector>

#include "ag/tensor.hpp"

namespace ag {

class Optimizer {
 public:
  explicit Optimizer(std::vector<Tensor> parameters, double lr);
  virtual ~Optimizer() = default;
  virtual void step() = 0;  ///< one update; parameters without a gradient are skipped
  void zero_grad();
  double lr;  ///< public so that a schedule can change it between steps

 protected:
  std::vector<Tensor> parameters_;
};

/// p -= lr * v, with v = momentum * v + (g + weight_decay * p).
class SGD : public Optimizer {
 public:
  SGD(std::vector<Tensor> parameters, double lr, double momentum = 0.0,
      double weight_decay = 0.0);
  void step() override;

 private:
  double momentum_, weight_decay_;
  std::vector<Tensor> velocity_;
};

/// Adam (Kingma & Ba) with bias correction. With decoupled_weight_decay (AdamW, Loshchilov &
/// Hutter) the decay shrinks p directly, p -= lr * wd * p, instead of being added to g.
class Adam : public Optimizer {
 public:
  Adam(std::vector<Tensor> parameters, double lr = 1e-3, double beta1 = 0.9,
       double beta2 = 0.999, double eps = 1e-8, double weight_decay = 0.0,
       bool decoupled_weight_decay = false);
  void step() override;
  long steps_taken() const { return t_; }
  /// The moment estimates (one pair per parameter) and the step count, for checkpoints.
  struct State {
    std::vector<Tensor> m, v;
    long t = 0;
  };
  State state() const { return {m_, v_, t_}; }
  /// Restores a saved state; shapes must match the parameters.
  void set_state(const State& state);

 private:
  double beta1_, beta2_, eps_, weight_decay_;
  bool decoupled_;
  long t_ = 0;
  std::vector<Tensor> m_, v_;
};

class AdamW : public Adam {
 public:
  AdamW(std::vector<Tensor> parameters, double lr = 1e-3, double beta1 = 0.9,
        double beta2 = 0.999, double eps = 1e-8, double weight_decay = 0.01)
      : Adam(std::move(parameters), lr, beta1, beta2, eps, weight_decay, true) {}
};

/// Scales all gradients together so that their global L2 norm is at most max_norm.
/// Returns the norm before clipping.
double clip_grad_norm(const std::vector<Tensor>& parameters, double max_norm);

}  // namespace ag
