// Saving and loading named tensors (checkpoints). The format is ours and small:
//   "AGTENSORS2\n", u64 metadata count, per entry two strings (u64 length + bytes: key,
//   value), u64 tensor count, then per tensor: u64 name length, name bytes, u8 dtype
//   (0 float32, 1 float64), u64 rank, rank x i64 extents, the values (little-endian),
//   and at the end a u64 FNV-1a checksum of everything before it.
// A missing file, a foreign or truncated file and a bad checksum are errors that say so.
#pragma once
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "ag/nn.hpp"
#include "ag/tensor.hpp"

namespace ag {

/// Tensors with their names, in file order.
using NamedTensors = std::vector<std::pair<std::string, Tensor>>;
/// Text key-value pairs stored beside the tensors.
using Metadata = std::map<std::string, std::string>;

/// Tensors plus text metadata (a training run keeps its configuration there).
struct TensorFile {
  Metadata metadata;     ///< the text pairs
  NamedTensors tensors;  ///< the tensors, in file order
};

/// Writes tensors and metadata to `path` (through a temporary name, renamed when complete).
void save_tensors(const std::string& path, const NamedTensors& tensors,
                  const Metadata& metadata = {});
/// Reads a file that save_tensors wrote; every defect is an ag::Error naming the file.
TensorFile load_tensor_file(const std::string& path);
/// The same from the bytes of a file already read; `path` names it in error messages.
TensorFile parse_tensor_file(const std::string& bytes, const std::string& path);
NamedTensors load_tensors(const std::string& path);  ///< the tensors of load_tensor_file

/// Writes every parameter of a module under its dotted name.
void save_module(const std::string& path, const Module& module);
/// Loads a checkpoint into a module whose parameters must match it exactly (names, shapes);
/// values are converted to each parameter's dtype. Mismatches are errors naming the tensor.
void load_module(const std::string& path, Module& module);
/// The same from tensors already read; `source` names them in error messages. Tensors whose
/// names start with `skip_prefix` (other state kept in the same file) are passed over.
void load_module(const NamedTensors& tensors, Module& module, const std::string& source,
                 const std::string& skip_prefix = "");

}  // namespace ag
