// Writing tensors in the safetensors format, the one the rest of the ecosystem reads (PyTorch,
// JAX, Hugging Face), so that a model trained here can be loaded elsewhere (appendix D):
//   u64 N (little-endian), then N bytes of JSON, then the values of every tensor, back to back:
//   {"__metadata__": {"key": "value", ...},
//    "name": {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}, ...}
// The offsets count from the first byte after the JSON, each tensor's values row-major and
// little-endian; the JSON is padded with spaces to a multiple of 8 bytes, so that the values
// start aligned. Our own checkpoints keep their format (io.hpp): it has a checksum.
#pragma once
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "ag/io.hpp"

namespace ag {

/// The values of one safetensors entry: a float32 or float64 tensor ("F32", "F64") or integer
/// ids ("I64"), such as token ids [B, T].
using SafetensorsValues = std::variant<Tensor, Indices>;
/// The entries of a file with their names, in file order.
using SafetensorsEntries = std::vector<std::pair<std::string, SafetensorsValues>>;

/// The whole file as bytes. Every name must be non-empty, unique and other than
/// "__metadata__"; names, metadata keys and values must be valid UTF-8 (JSON's text); an
/// Indices' values must fill its shape. Anything else is an ag::Error naming the entry.
std::string safetensors_bytes(const SafetensorsEntries& entries, const Metadata& metadata = {});

/// Writes safetensors_bytes to `path`, whole or not at all (write_file_atomically).
void save_safetensors(const std::string& path, const SafetensorsEntries& entries,
                      const Metadata& metadata = {});

}  // namespace ag
