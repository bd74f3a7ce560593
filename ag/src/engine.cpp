// The backward engine: order the tape, then push gradients from the root to the leaves.
#include <unordered_map>

#include "ag/micro_batches.hpp"
#include "ag/ops.hpp"
#include "ag/profile.hpp"
#include "ag/src/impl.hpp"

namespace ag {

// [record]
Tensor record(const char* op, Tensor output, std::vector<Tensor> inputs, BackwardFn backward) {
  if (!grad_enabled()) return output;
  bool any = false;
  for (const Tensor& input : inputs) any = any || input.requires_grad();
  if (!any) return output;
  auto node = std::make_shared<Node>();
  node->op = op;
  node->inputs = std::move(inputs);
  node->backward = std::move(backward);
  output.impl().grad_fn = std::move(node);
  output.impl().requires_grad = true;
  return output;
}
// [record]

// [topological-order]
// Depth-first post-order with an explicit stack, then reversed: a node comes out only after
// every node that consumes its output, however deep the graph.
std::vector<Node*> topological_order(const Tensor& root) {
  // TASK 0.1 begin: the topological sort
  std::vector<Node*> post_order;
  if (!root.grad_fn()) return post_order;
  std::unordered_map<Node*, bool> visited;
  std::vector<std::pair<Node*, std::size_t>> stack;  // node, next input to look at
  stack.emplace_back(root.grad_fn().get(), 0);
  visited[root.grad_fn().get()] = true;
  while (!stack.empty()) {
    auto& [node, next] = stack.back();
    if (next < node->inputs.size()) {
      const Tensor& input = node->inputs[next++];
      Node* child = input.grad_fn().get();
      if (child && !visited[child]) {
        visited[child] = true;
        stack.emplace_back(child, 0);
      }
    } else {
      post_order.push_back(node);
      stack.pop_back();
    }
  }
  return {post_order.rbegin(), post_order.rend()};
  // TASK 0.1 end
}
// [topological-order]

namespace {

// True when nothing but this handle can see t's values: no other handle to it, and no other
// tensor on its storage (no alias, no forward value, no gradient sent to another input).
bool owned_alone(const Tensor& t) {
  return t.impl_ptr().use_count() == 1 && t.impl().storage.use_count() == 1;
}

// Sums a fan-in's gradients. The first increment is kept as it is; it may share storage with a
// forward value or with a gradient sent to another input (add sends the same tensor to both),
// so a later one is added into it in place only when the running total is owned alone, and
// out of place otherwise. Either way the sum is total + increment, rounded once.
void accumulate(Tensor& total, const Tensor& increment) {
  profile::Scope scope("accumulate gradients", profile::Phase::backward);
  if (!total.defined())
    total = increment;
  else if (owned_alone(total))
    add_into(total, increment);
  else
    total = add(total, increment);
}

// A leaf's gradient outlives the sweep and grows in place across calls, so it needs storage of
// its own on the first arrival: the increment itself when nothing else holds it (the usual
// case: a backward rule's fresh result), else a copy.
void accumulate_leaf(const Tensor& leaf, const Tensor& increment) {
  profile::Scope scope("accumulate gradients", profile::Phase::backward);
  // A micro-batch's sweep (ag/micro_batches.hpp): kept apart, summed later in a fixed order.
  if (GradientCapture* capture = current_gradient_capture()) {
    capture->add(leaf, increment);
    return;
  }
  if (Tensor total = leaf.grad(); total.defined())
    add_into(total, increment);
  else if (owned_alone(increment))
    leaf.impl().grad = increment.impl_ptr();
  else
    leaf.impl().grad = increment.clone().impl_ptr();
}

// A node's backward rule, timed under its op's name while profiling is on (ag/profile.hpp).
std::vector<Tensor> run_rule(Node& node, const Tensor& grad_output) {
  profile::Scope scope(node.op.c_str(), profile::Phase::backward);
  return node.backward(grad_output);
}

void run_backward(const Tensor& root, const Tensor& seed) {
  check(root.requires_grad(), "backward",
        "this tensor does not require a gradient (no input was marked with "
        "set_requires_grad, or it was computed under NoGradGuard)");
  NoGradGuard no_grad;    // backward rules use ops, but build no tape themselves
  if (!root.grad_fn()) {  // a leaf: its gradient is the seed
    accumulate_leaf(root, seed);
    return;
  }
  // [backward-loop]
  // Gradients waiting at each node's output; each is summed over every consumer (fan-in)
  // before its node runs, which the topological order guarantees.
  std::unordered_map<Node*, Tensor> pending;
  pending[root.grad_fn().get()] = seed;
  for (Node* node : topological_order(root)) {
    Tensor grad_output = std::move(pending[node]);
    pending.erase(node);
    std::vector<Tensor> grads = run_rule(*node, grad_output);
    check(grads.size() == node->inputs.size(), node->op.c_str(), "backward rule returned ",
          grads.size(), " gradients for ", node->inputs.size(), " inputs");
    for (std::size_t i = 0; i < grads.size(); ++i) {
      const Tensor& input = node->inputs[i];
      if (!input.requires_grad() || !grads[i].defined()) continue;
      check(grads[i].shape() == input.shape(), node->op.c_str(), "backward rule gave a ",
            shape_string(grads[i].shape()), " gradient for input ", i, " of shape ",
            shape_string(input.shape()));
      if (input.grad_fn()) {
        accumulate(pending[input.grad_fn().get()], grads[i]);
      } else {
        accumulate_leaf(input, grads[i]);
      }
    }
  }
  // [backward-loop]
}

}  // namespace

void Tensor::backward() const {
  check(numel() == 1, "backward", "called on a tensor of shape ", shape_string(shape()),
        "; only a one-element tensor (a loss) has an implied seed. Pass a seed gradient of "
        "that shape: backward(seed)");
  run_backward(*this, ones(shape(), dtype()));
}

void Tensor::backward(const Tensor& seed) const {
  check(seed.shape() == shape(), "backward", "seed gradient has shape ", shape_string(seed.shape()),
        " but the tensor has shape ", shape_string(shape()));
  check(seed.dtype() == dtype(), "backward", "seed is ", dtype_name(seed.dtype()),
        " but the tensor is ", dtype_name(dtype()));
  run_backward(*this, seed);
}

}  // namespace ag
