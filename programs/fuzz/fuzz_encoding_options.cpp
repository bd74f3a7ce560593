// libFuzzer target: the encodings' option parsers. The input's first line names an encoding,
// each further line is one option "key=value"; make_encoding builds it for a tiny model (width
// 8, 2 heads, sequences up to 16) and, when it accepts the options, its own quantities are
// computed (inspect). A bad name or option must be an ag::Error; anything else (a crash,
// another exception, a sanitizer report, memory sized from an option) is a finding.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "ag/error.hpp"
#include "chapters/01-attention/encoding_registry.hpp"
#include "lab/chapter_registry.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const bool registered = (pe::register_chapter_encodings(), true);
  (void)registered;
  std::istringstream lines(std::string(reinterpret_cast<const char*>(data), size));
  std::string name, line;
  std::getline(lines, name);
  pe::EncodingSpec spec;
  spec.model.width = 8;
  spec.model.heads = 2;
  spec.model.layers = 1;
  spec.model.ffn_width = 16;
  spec.max_length = 16;
  while (std::getline(lines, line)) {
    const auto eq = line.find('=');
    if (eq == std::string::npos) continue;
    spec.options[line.substr(0, eq)] = line.substr(eq + 1);
  }
  try {
    ag::Rng rng(1);
    const auto encoding = pe::make_encoding(name, spec, rng);
    for (const auto& [quantity, tensor] : encoding->inspect(spec.max_length)) (void)tensor.numel();
  } catch (const ag::Error&) {
    // a clear refusal is the expected outcome for most inputs
  }
  return 0;
}
