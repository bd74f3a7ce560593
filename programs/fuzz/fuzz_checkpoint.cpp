// libFuzzer target: the checkpoint parser on arbitrary bytes. A file is either read or refused
// with an ag::Error; anything else (a crash, another exception, a sanitizer report, memory sized
// from the file) is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "ag/error.hpp"
#include "ag/io.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    ag::TensorFile file = ag::parse_tensor_file(bytes, "fuzz input");
    for (const auto& [name, tensor] : file.tensors) (void)tensor.numel();
  } catch (const ag::Error&) {
    // a clear refusal is the expected outcome for almost every input
  }
  return 0;
}
