// The tape: every op that needs a gradient leaves a Node behind, pointing at its inputs.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ag/tensor.hpp"

namespace ag {

/// Given the gradient of the loss with respect to an op's output, returns the gradient
/// with respect to each of its inputs (same order as Node::inputs; an undefined Tensor
/// where the input needs none).
using BackwardFn = std::function<std::vector<Tensor>(const Tensor& grad_output)>;

// [node]
/// One recorded op. A backward rule captures what it needs from the forward pass, and only
/// detached tensors (never the inputs themselves, which are kept here), so that the tape
/// has no cycles and can be released without recursion.
struct Node {
  std::string op;              ///< "matmul", "add", ...
  std::vector<Tensor> inputs;  ///< the tensors this op read
  BackwardFn backward;
};
// [node]

/// Wraps up an op: if gradients are on and some input requires one, `output` gets a node
/// with `backward` as its rule. Returns `output`.
Tensor record(const char* op, Tensor output, std::vector<Tensor> inputs, BackwardFn backward);

/// Nodes reachable from `root`, ordered so that every node comes before the nodes of its
/// inputs (the order in which backward visits them). Iterative: no recursion limit.
std::vector<Node*> topological_order(const Tensor& root);

}  // namespace ag
