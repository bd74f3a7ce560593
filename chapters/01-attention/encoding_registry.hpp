// Encodings by name, so that the `pe` command and the trainer can build any encoding that is
// in the build. Each chapter registers its own; "none" (chapter 1) is always there.
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "chapters/01-attention/decoder.hpp"

namespace pe {

/// What a factory may need to build an encoding for a model.
struct EncodingSpec {
  DecoderConfig model;           ///< the model the encoding is for (width, heads, layers)
  std::int64_t max_length = 32;  ///< the longest sequence the encoding must handle
  std::map<std::string, std::string> options;  ///< encoding-specific ("base", "buckets", ...)
  ag::Dtype dtype = ag::Dtype::f32;            ///< the element type of any table it makes
};

/// Builds an encoding from a spec, drawing any initial values from the generator.
using EncodingFactory =
    std::function<std::shared_ptr<PositionalEncoding>(const EncodingSpec&, ag::Rng&)>;

/// One registered encoding: its name in `pe` and its factory.
struct EncodingEntry {
  std::string name;                       ///< as `pe train --encoding` takes it ("rope")
  std::string chapter;                    ///< the chapter that adds it ("05")
  std::string description;                ///< one line for `pe list`
  std::vector<std::string> option_names;  ///< the options the factory understands
  EncodingFactory make;                   ///< builds it
};

/// Adds an encoding. Registering the same entry again (same name, chapter, description,
/// options and factory: a chapter's register function called twice) changes nothing, so that
/// programs and tests call register functions without keeping count; a different entry under
/// a name already taken is an error.
void register_encoding(EncodingEntry entry);
/// For a later chapter that extends an encoding (chapter 8's scaling rules extend chapter 5's
/// "rope"): `name` accepts `options` too from now on (its factory must read them). Options it
/// already has are left as they are; an unknown name is an error.
void add_encoding_options(const std::string& name, const std::vector<std::string>& options);
/// Builds a registered encoding. An unknown name, or an option the encoding does not know,
/// is an error that lists what is known.
std::shared_ptr<PositionalEncoding> make_encoding(const std::string& name, const EncodingSpec& spec,
                                                  ag::Rng& rng);
/// Every registered encoding, in registration order.
std::vector<EncodingEntry> registered_encodings();

/// The numeric option `key` of spec (fallback when absent); a value that is not a number is
/// an error naming the encoding, the option and the value.
double number_option(const EncodingSpec& spec, const std::string& encoding, const std::string& key,
                     double fallback);

/// The largest value an option that sizes a table (rows, distances, buckets) may take: a
/// bound against typing mistakes, far above what any experiment here uses.
constexpr std::int64_t kLargestTableOption = 1'000'000;

/// The whole-number option `key` of spec (fallback when absent), from low to high. A value
/// that is not a whole number ("16.5", "12abc", ""), or out of range, is an error naming the
/// encoding, the option and the value: a table cannot have 16.5 rows.
std::int64_t integer_option(const EncodingSpec& spec, const std::string& encoding,
                            const std::string& key, std::int64_t fallback, std::int64_t low,
                            std::int64_t high);

/// The yes/no option `key` of spec (fallback when absent): "true" or "1", "false" or "0";
/// anything else is an error naming the encoding, the option and the value.
bool bool_option(const EncodingSpec& spec, const std::string& encoding, const std::string& key,
                 bool fallback);

/// D = C / H of spec's model, for an encoding that lives inside the heads; a width the heads do
/// not divide is an error naming the encoding.
std::int64_t head_width_of(const EncodingSpec& spec, const std::string& encoding);

}  // namespace pe
