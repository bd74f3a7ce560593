// Encodings by name, so that the `pe` command and the trainer can build any encoding that is
// in the build. Each chapter registers its own; "none" (chapter 1) is always there.
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "decoder.hpp"

namespace pe {

/// What a factory may need to build an encoding for a model.
struct EncodingSpec {
  DecoderConfig model;
  std::int64_t max_length = 32;  ///< the longest sequence the encoding must handle
  std::map<std::string, std::string> options;  ///< encoding-specific ("base", "buckets", ...)
  ag::Dtype dtype = ag::Dtype::f32;
};

using EncodingFactory =
    std::function<std::shared_ptr<PositionalEncoding>(const EncodingSpec&, ag::Rng&)>;

struct EncodingEntry {
  std::string name, chapter, description;
  std::vector<std::string> option_names;  ///< the options the factory understands
  EncodingFactory make;
};

/// Adds an encoding; registering a name twice is an error.
void register_encoding(EncodingEntry entry);
/// Builds a registered encoding. An unknown name, or an option the encoding does not know,
/// is an error that lists what is known.
std::shared_ptr<PositionalEncoding> make_encoding(const std::string& name,
                                                  const EncodingSpec& spec, ag::Rng& rng);
/// Every registered encoding, in registration order.
std::vector<EncodingEntry> registered_encodings();

/// The numeric option `key` of spec (fallback when absent); a value that is not a number is
/// an error naming the encoding, the option and the value.
double number_option(const EncodingSpec& spec, const std::string& encoding,
                     const std::string& key, double fallback);

}  // namespace pe
