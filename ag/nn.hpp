// Modules: named, nested parameters, and the three layers every chapter uses.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "ag/functional.hpp"
#include "ag/random.hpp"
#include "ag/tensor.hpp"

namespace ag {

/// A module owns parameters and child modules, each registered under a name, so that
/// named_parameters() can list them as "blocks.0.attention.query.weight".
/// Modules hold pointers to their own members: they can be neither copied nor moved
/// (keep them in std::unique_ptr when you need a list of them).
class Module {
 public:
  Module() = default;
  virtual ~Module() = default;
  Module(const Module&) = delete;             ///< not copyable: children point at members
  Module& operator=(const Module&) = delete;  ///< not copyable: children point at members

  /// Every parameter with its dotted path ("blocks.0.attention.query.weight"), own ones
  /// first, then each child's in registration order.
  std::vector<std::pair<std::string, Tensor>> named_parameters() const;
  /// The handles of named_parameters(), in the same order (what an optimiser takes).
  std::vector<Tensor> parameters() const;
  /// The number of trainable numbers: the sum of the parameters' element counts.
  std::int64_t parameter_count() const;
  /// Forgets the gradient of every parameter.
  void zero_grad();
  /// Converts every parameter in place (float64 for gradient checks, float32 to train).
  void to(Dtype dtype);

 protected:
  /// Registers a member tensor as a trainable parameter; returns it.
  Tensor& register_parameter(const std::string& name, Tensor& parameter);
  /// Registers a member module, whose parameters then appear under "name.".
  void register_module(const std::string& name, Module& child);

 private:
  std::vector<std::pair<std::string, Tensor*>> parameters_;
  std::vector<std::pair<std::string, Module*>> children_;
};

/// y = x W + b.  x: [..., in] -> [..., out]. W is stored as [in, out] so the forward pass
/// is one matmul. Initialised uniformly in +-1/sqrt(in), as PyTorch does.
class Linear : public Module {
 public:
  /// \param in, out the widths of x's and y's last axis  \param rng the initialisation's draws
  /// \param bias whether to add b  \param dtype the parameters' element type
  Linear(std::int64_t in, std::int64_t out, Rng& rng, bool bias = true, Dtype dtype = Dtype::f32);
  /// x: [..., in] -> [..., out]; with Activation::relu, max(x W + b, 0) in the same op
  /// (ag::linear).
  Tensor forward(const Tensor& x, Activation activation = Activation::none) const;
  Tensor weight;  ///< W: [in, out]
  Tensor bias;    ///< b: [out]; undefined when constructed without one
};

/// Rows of a [V, C] table picked by integer ids: ids [...] -> [..., C].
/// Initialised from N(0, stddev^2).
class Embedding : public Module {
 public:
  /// \param count V, the number of rows  \param width C  \param rng the initialisation's draws
  /// \param stddev of the initial values  \param dtype the table's element type
  Embedding(std::int64_t count, std::int64_t width, Rng& rng, double stddev = 1.0,
            Dtype dtype = Dtype::f32);
  /// ids [...] -> [..., C]; every id in [0, V).
  Tensor forward(const Indices& ids) const;
  Tensor weight;  ///< the table: [V, C]
};

/// x: [..., C] -> [..., C], normalised over the last axis, then scaled and shifted.
class LayerNorm : public Module {
 public:
  /// \param width C, the normalised axis  \param eps added to the variance
  /// \param dtype the parameters' element type
  explicit LayerNorm(std::int64_t width, double eps = 1e-5, Dtype dtype = Dtype::f32);
  /// x: [..., C] -> [..., C]
  Tensor forward(const Tensor& x) const;
  Tensor gamma;  ///< the scale: [C], initially 1
  Tensor beta;   ///< the shift: [C], initially 0
  double eps;    ///< added to the variance before the square root
};

}  // namespace ag
