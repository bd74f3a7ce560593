#include "chapters/01-attention/encoding_registry.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "ag/numbers.hpp"

namespace pe {

namespace {
std::vector<EncodingEntry>& entries() {
  // Chapter 1's own encoding is there from the start; later chapters add theirs through
  // their register functions (no static initialisers, which static libraries may drop).
  static std::vector<EncodingEntry> all{
      {"none",
       "01",
       "no positional information: attention sees a bag of tokens, plus the mask",
       {},
       [](const EncodingSpec&, ag::Rng&) { return std::make_shared<NoEncoding>(); }}};
  return all;
}

std::string known_names() {
  std::string names;
  for (const auto& entry : entries()) names += (names.empty() ? "" : ", ") + entry.name;
  return names;
}
}  // namespace

void register_encoding(EncodingEntry entry) {
  for (const auto& existing : entries()) {
    if (existing.name != entry.name) continue;
    // Each lambda has a type of its own: the same factory type is the same register call.
    const bool same = existing.chapter == entry.chapter &&
                      existing.description == entry.description &&
                      existing.option_names == entry.option_names &&
                      existing.make.target_type() == entry.make.target_type();
    ag::check(same, "register_encoding", "'", entry.name, "' is already registered (chapter ",
              existing.chapter, ") with a different definition");
    return;
  }
  entries().push_back(std::move(entry));
}

void add_encoding_options(const std::string& name, const std::vector<std::string>& options) {
  for (auto& entry : entries()) {
    if (entry.name != name) continue;
    for (const std::string& option : options)
      if (std::find(entry.option_names.begin(), entry.option_names.end(), option) ==
          entry.option_names.end())
        entry.option_names.push_back(option);
    return;
  }
  throw ag::Error("add_encoding_options: unknown encoding '" + name + "' (known: " + known_names() +
                  ")");
}

std::shared_ptr<PositionalEncoding> make_encoding(const std::string& name, const EncodingSpec& spec,
                                                  ag::Rng& rng) {
  for (const auto& entry : entries()) {
    if (entry.name != name) continue;
    for (const auto& [option, value] : spec.options)
      ag::check(std::find(entry.option_names.begin(), entry.option_names.end(), option) !=
                    entry.option_names.end(),
                "make_encoding", "encoding '", name, "' has no option '", option, "'");
    return entry.make(spec, rng);
  }
  throw ag::Error("make_encoding: unknown encoding '" + name + "' (known: " + known_names() + ")");
}

std::vector<EncodingEntry> registered_encodings() { return entries(); }

double number_option(const EncodingSpec& spec, const std::string& encoding, const std::string& key,
                     double fallback) {
  const auto it = spec.options.find(key);
  if (it == spec.options.end()) return fallback;
  double value = 0;
  if (ag::parse_double(it->second, value) && std::isfinite(value)) return value;
  throw ag::Error(encoding + ": option " + key + " must be a finite number, got '" + it->second +
                  "'");
}

std::int64_t head_width_of(const EncodingSpec& spec, const std::string& encoding) {
  ag::check(spec.model.heads > 0 && spec.model.width % spec.model.heads == 0, encoding.c_str(),
            "width ", spec.model.width, " is not divisible into ", spec.model.heads, " heads");
  return spec.model.width / spec.model.heads;
}

std::int64_t integer_option(const EncodingSpec& spec, const std::string& encoding,
                            const std::string& key, std::int64_t fallback, std::int64_t low,
                            std::int64_t high) {
  const auto it = spec.options.find(key);
  if (it == spec.options.end()) return fallback;
  const std::string& text = it->second;
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < low || value > high)
    throw ag::Error(encoding + ": option " + key + " must be a whole number from " +
                    std::to_string(low) + " to " + std::to_string(high) + ", got '" + text + "'");
  return value;
}

bool bool_option(const EncodingSpec& spec, const std::string& encoding, const std::string& key,
                 bool fallback) {
  const auto it = spec.options.find(key);
  if (it == spec.options.end()) return fallback;
  if (it->second == "true" || it->second == "1") return true;
  if (it->second == "false" || it->second == "0") return false;
  throw ag::Error(encoding + ": option " + key + " must be true, false, 1 or 0, got '" +
                  it->second + "'");
}

}  // namespace pe
