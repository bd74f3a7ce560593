// Saving and loading named tensors (checkpoints). The format is ours and small:
//   "AGTENSORS1\n", u64 count, then per tensor: u64 name length, name bytes, u8 dtype
//   (0 float32, 1 float64), u64 rank, rank x i64 extents, the values (little-endian),
//   and at the end a u64 FNV-1a checksum of everything before it.
// A missing file, a foreign or truncated file and a bad checksum are errors that say so.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "ag/nn.hpp"
#include "ag/tensor.hpp"

namespace ag {

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

void save_tensors(const std::string& path, const NamedTensors& tensors);
NamedTensors load_tensors(const std::string& path);

/// Writes every parameter of a module under its dotted name.
void save_module(const std::string& path, const Module& module);
/// Loads a checkpoint into a module whose parameters must match it exactly (names, shapes);
/// values are converted to each parameter's dtype. Mismatches are errors naming the tensor.
void load_module(const std::string& path, Module& module);

}  // namespace ag
