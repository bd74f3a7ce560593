// Optimisers update parameters in place from their accumulated gradients.
#pragma once
#include <vector>

#include "ag/tensor.hpp"

namespace ag {

/// The common part of every optimiser: the parameters it updates and the learning rate.
class Optimizer {
 public:
  /// \param parameters handles to the leaves to update (Module::parameters())
  /// \param lr learning rate
  explicit Optimizer(std::vector<Tensor> parameters, double lr);
  virtual ~Optimizer() = default;
  virtual void step() = 0;  ///< one update; parameters without a gradient are skipped
  void zero_grad();         ///< zero_grad() on every parameter
  double lr;                ///< public so that a schedule can change it between steps

 protected:
  std::vector<Tensor> parameters_;  ///< the handles given at construction
};

/// p -= lr * v, with v = momentum * v + (g + weight_decay * p).
class SGD : public Optimizer {
 public:
  /// \param parameters the leaves to update  \param lr learning rate
  /// \param momentum the factor on the previous velocity (0: plain gradient descent)
  /// \param weight_decay L2 penalty added to the gradient
  SGD(std::vector<Tensor> parameters, double lr, double momentum = 0.0, double weight_decay = 0.0);
  void step() override;  ///< one update of every parameter that has a gradient

 private:
  double momentum_, weight_decay_;
  std::vector<Tensor> velocity_;
};

/// Adam (Kingma & Ba) with bias correction. With decoupled_weight_decay (AdamW, Loshchilov &
/// Hutter) the decay shrinks p directly, p -= lr * wd * p, instead of being added to g.
class Adam : public Optimizer {
 public:
  /// \param parameters the leaves to update  \param lr learning rate
  /// \param beta1, beta2 decay rates of the first and second moment estimates
  /// \param eps added to the root of the second moment
  /// \param weight_decay the decay factor  \param decoupled_weight_decay AdamW's rule when true
  Adam(std::vector<Tensor> parameters, double lr = 1e-3, double beta1 = 0.9, double beta2 = 0.999,
       double eps = 1e-8, double weight_decay = 0.0, bool decoupled_weight_decay = false);
  void step() override;                    ///< one update of every parameter that has a gradient
  long steps_taken() const { return t_; }  ///< the step count t of the bias correction
  /// The moment estimates (one pair per parameter) and the step count, for checkpoints.
  struct State {
    std::vector<Tensor> m;  ///< first moments, one per parameter
    std::vector<Tensor> v;  ///< second moments, one per parameter
    long t = 0;             ///< steps taken
  };
  State state() const { return {m_, v_, t_}; }  ///< a copy of the handles and the count
  /// Restores a saved state; shapes must match the parameters.
  void set_state(const State& state);

 private:
  double beta1_, beta2_, eps_, weight_decay_;
  bool decoupled_;
  long t_ = 0;
  std::vector<Tensor> m_, v_;
};

/// Adam with decoupled weight decay (Loshchilov & Hutter), default decay 0.01.
class AdamW : public Adam {
 public:
  /// The parameters as Adam's; the decay is decoupled.
  AdamW(std::vector<Tensor> parameters, double lr = 1e-3, double beta1 = 0.9, double beta2 = 0.999,
        double eps = 1e-8, double weight_decay = 0.01)
      : Adam(std::move(parameters), lr, beta1, beta2, eps, weight_decay, true) {}
};

/// Scales all gradients together so that their global L2 norm is at most max_norm.
/// Returns the norm before clipping.
double clip_grad_norm(const std::vector<Tensor>& parameters, double max_norm);

}  // namespace ag
