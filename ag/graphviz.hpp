// Drawing the tape: the computation graph behind a tensor, as Graphviz dot text.
#pragma once
#include <iosfwd>
#include <string>

#include "ag/tensor.hpp"

namespace ag {

/// Writes the graph reachable from `root` as a Graphviz digraph: one box per leaf (its name
/// and shape) and one per op (the op's name and its output's shape), with an edge from each
/// input to the op that read it. Render it with `dot -Tpng graph.dot -o graph.png`.
void write_dot(const Tensor& root, std::ostream& out);
/// The same, into a file. Throws ag::Error naming the path if it cannot be written.
void write_dot(const Tensor& root, const std::string& path);

}  // namespace ag
