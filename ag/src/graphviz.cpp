#include "ag/graphviz.hpp"

#include <ostream>
#include <sstream>
#include <unordered_map>

#include "ag/files.hpp"
#include "ag/tape.hpp"

namespace ag {

namespace {

// Dot strings are quoted: only the quote and the backslash need escaping.
std::string escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

}  // namespace

void write_dot(const Tensor& root, std::ostream& out) {
  check(root.defined(), "write_dot", "the root tensor is an empty handle");
  const std::vector<Node*> order = topological_order(root);

  // A Node does not know its own output; the tensors that point at it do. Every op output
  // except the root is some later op's input, so one pass over the inputs finds its shape.
  std::unordered_map<const Node*, Shape> output_shape;
  if (root.grad_fn()) output_shape[root.grad_fn().get()] = root.shape();
  for (const Node* node : order)
    for (const Tensor& input : node->inputs)
      if (input.grad_fn()) output_shape.emplace(input.grad_fn().get(), input.shape());

  // Ids in order of first appearance, so the same graph always gives the same text.
  std::unordered_map<const void*, std::string> ids;
  auto id_of = [&](const void* key, char prefix) -> const std::string& {
    auto [it, added] = ids.emplace(key, "");
    if (added) it->second = prefix + std::to_string(ids.size() - 1);
    return it->second;
  };
  auto write_leaf = [&](const Tensor& leaf) -> const std::string& {
    const std::size_t before = ids.size();
    const std::string& id = id_of(leaf.impl_ptr().get(), 'l');
    if (ids.size() == before) return id;  // already written
    const std::string name = leaf.name().empty() ? "constant" : leaf.name();
    out << "  " << id << " [label=\"" << escape(name) << "\\n"
        << shape_string(leaf.shape()) << "\", "
        << (leaf.requires_grad() ? "style=filled, fillcolor=\"#cfe2f3\"" : "style=dashed")
        << "];\n";
    return id;
  };

  out << "digraph tape {\n"
      << "  node [shape=box, fontname=\"Helvetica\", fontsize=10];\n"
      << "  edge [arrowsize=0.6];\n";
  if (!root.grad_fn()) write_leaf(root);
  for (const Node* node : order) {
    const std::string& id = id_of(node, 'n');
    out << "  " << id << " [label=\"" << escape(node->op) << "\\n"
        << shape_string(output_shape[node]) << "\"];\n";
  }
  for (const Node* node : order) {
    const std::string& id = ids.at(node);
    for (const Tensor& input : node->inputs) {
      const std::string& from = input.grad_fn() ? ids.at(input.grad_fn().get()) : write_leaf(input);
      out << "  " << from << " -> " << id << ";\n";
    }
  }
  out << "}\n";
}

void write_dot(const Tensor& root, const std::string& path) {
  std::ostringstream text;
  write_dot(root, text);
  write_file_atomically(path, text.str());
}

}  // namespace ag
