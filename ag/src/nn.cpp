#include "ag/nn.hpp"

#include <cmath>

#include "ag/src/impl.hpp"

namespace ag {

Tensor& Module::register_parameter(const std::string& name, Tensor& parameter) {
  check(parameter.defined(), "register_parameter", "parameter '", name, "' is empty");
  parameter.set_requires_grad(true);
  if (parameter.name().empty()) parameter.set_name(name);
  parameters_.emplace_back(name, &parameter);
  return parameter;
}

void Module::register_module(const std::string& name, Module& child) {
  children_.emplace_back(name, &child);
}

std::vector<std::pair<std::string, Tensor>> Module::named_parameters() const {
  std::vector<std::pair<std::string, Tensor>> all;
  // An explicit stack, as elsewhere: a deep stack of blocks is no reason to recurse.
  std::vector<std::pair<std::string, const Module*>> todo{{"", this}};
  while (!todo.empty()) {
    auto [prefix, module] = todo.back();
    todo.pop_back();
    for (const auto& [name, tensor] : module->parameters_) all.emplace_back(prefix + name, *tensor);
    for (auto it = module->children_.rbegin(); it != module->children_.rend(); ++it)
      todo.emplace_back(prefix + it->first + ".", it->second);
  }
  return all;
}

std::vector<Tensor> Module::parameters() const {
  std::vector<Tensor> out;
  for (auto& [name, tensor] : named_parameters()) out.push_back(tensor);
  return out;
}

std::int64_t Module::parameter_count() const {
  std::int64_t n = 0;
  for (const Tensor& p : parameters()) n += p.numel();
  return n;
}

void Module::zero_grad() {
  for (Tensor p : parameters()) p.zero_grad();
}

void Module::to(Dtype dtype) {
  for (Tensor p : parameters()) p.convert_(dtype);
}

Linear::Linear(std::int64_t in, std::int64_t out, Rng& rng, bool with_bias, Dtype dtype) {
  check(in > 0 && out > 0, "Linear", "sizes must be positive, got in=", in, " out=", out);
  const double bound = 1.0 / std::sqrt(double(in));
  weight = rand_uniform({in, out}, rng, -bound, bound, dtype);
  register_parameter("weight", weight);
  if (with_bias) {
    bias = rand_uniform({out}, rng, -bound, bound, dtype);
    register_parameter("bias", bias);
  }
}

Tensor Linear::forward(const Tensor& x, Activation activation) const {
  check(x.dim() >= 1 && x.size(-1) == weight.size(0), "Linear", "expected input [..., ",
        weight.size(0), "], got ", shape_string(x.shape()));
  return linear(x, weight, bias, activation);
}

Embedding::Embedding(std::int64_t count, std::int64_t width, Rng& rng, double stddev, Dtype dtype) {
  check(count > 0 && width > 0, "Embedding", "sizes must be positive, got ", count, " x ", width);
  weight = randn({count, width}, rng, dtype, stddev);
  register_parameter("weight", weight);
}

Tensor Embedding::forward(const Indices& ids) const { return embedding(weight, ids); }

LayerNorm::LayerNorm(std::int64_t width, double eps_, Dtype dtype) : eps(eps_) {
  gamma = ones({width}, dtype);
  beta = zeros({width}, dtype);
  register_parameter("gamma", gamma);
  register_parameter("beta", beta);
}

Tensor LayerNorm::forward(const Tensor& x) const { return layer_norm(x, gamma, beta, eps); }

}  // namespace ag
