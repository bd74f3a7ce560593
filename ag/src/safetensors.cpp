#include "ag/safetensors.hpp"

#include <bit>
#include <cstdint>
#include <set>

#include "ag/files.hpp"
#include "ag/src/impl.hpp"

namespace ag {

// The values are copied as they lie in memory, and safetensors is little-endian.
static_assert(std::endian::native == std::endian::little,
              "safetensors files are little-endian: this writer copies values as they lie");

namespace {

// Whether text is valid UTF-8 (what JSON text must be): no stray continuation byte, no
// overlong form, no surrogate, nothing past U+10FFFF.
bool valid_utf8(const std::string& text) {
  std::size_t i = 0;
  while (i < text.size()) {
    const auto byte = static_cast<unsigned char>(text[i]);
    std::size_t extra = 0;
    std::uint32_t code = 0;
    if (byte < 0x80) {
      ++i;
      continue;
    } else if ((byte & 0xE0) == 0xC0) {
      extra = 1, code = byte & 0x1F;
    } else if ((byte & 0xF0) == 0xE0) {
      extra = 2, code = byte & 0x0F;
    } else if ((byte & 0xF8) == 0xF0) {
      extra = 3, code = byte & 0x07;
    } else {
      return false;
    }
    if (text.size() - i <= extra) return false;  // cut short
    for (std::size_t k = 1; k <= extra; ++k) {
      const auto next = static_cast<unsigned char>(text[i + k]);
      if ((next & 0xC0) != 0x80) return false;
      code = (code << 6) | (next & 0x3F);
    }
    static constexpr std::uint32_t kSmallest[] = {0, 0x80, 0x800, 0x10000};
    if (code < kSmallest[extra] || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF))
      return false;
    i += extra + 1;
  }
  return true;
}

// A JSON string: quotes, backslashes and control characters escaped; other bytes as they are
// (already checked to be UTF-8).
std::string json_string(const std::string& text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "\"";
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (byte < 0x20) {
      out += "\\u00";
      out += kHex[byte >> 4];
      out += kHex[byte & 0xF];
    } else {
      out += c;
    }
  }
  out += '"';
  return out;
}

// out += each part in turn: appending, never "," + std::string (GCC 12 warns falsely about
// such a sum at -O3, GCC bug 105329).
template <class... Parts>
void append(std::string& out, const Parts&... parts) {
  (out += ... += parts);
}

template <class... Parts>
void check_text(const std::string& text, const Parts&... what) {
  check(valid_utf8(text), "safetensors", what..., " is not valid UTF-8 (JSON's text)");
}

// One entry's dtype, shape and values as bytes.
struct Encoded {
  const char* dtype;
  Shape shape;
  const char* data;
  std::size_t bytes;
};

Encoded encode(const std::string& name, const SafetensorsValues& values) {
  if (const auto* ids = std::get_if<Indices>(&values)) {
    check(std::uint64_t(numel(ids->shape)) == ids->values.size(), "safetensors", "entry '", name,
          "' has ", ids->values.size(), " ids, but its shape ", shape_string(ids->shape), " holds ",
          numel(ids->shape));
    return {"I64", ids->shape, reinterpret_cast<const char*>(ids->values.data()),
            sizeof(std::int64_t) * ids->values.size()};
  }
  const Tensor& tensor = std::get<Tensor>(values);
  check(tensor.defined(), "safetensors", "entry '", name, "' is an undefined tensor");
  Encoded out{tensor.dtype() == Dtype::f32 ? "F32" : "F64", tensor.shape(), nullptr, 0};
  dispatch(tensor.dtype(), [&](auto t) {
    using T = decltype(t);
    out.data = reinterpret_cast<const char*>(tensor.data<T>());
    out.bytes = sizeof(T) * std::size_t(tensor.numel());
  });
  return out;
}

}  // namespace

// [safetensors-bytes]
std::string safetensors_bytes(const SafetensorsEntries& entries, const Metadata& metadata) {
  std::string header = "{\"__metadata__\":{";
  bool first = true;
  for (const auto& [key, value] : metadata) {
    check_text(key, "metadata key '", key, "'");
    check_text(value, "the value of metadata key '", key, "'");
    append(header, first ? "" : ",", json_string(key), ":", json_string(value));
    first = false;
  }
  header += "}";
  std::set<std::string> names;
  std::string data;  // every tensor's values, back to back, in the order of `entries`
  for (const auto& [name, values] : entries) {
    check(!name.empty(), "safetensors", "a tensor needs a name, got ''");
    check(name != "__metadata__", "safetensors",
          "'__metadata__' is the metadata's key, not a tensor's name");
    check_text(name, "tensor name '", name, "'");
    check(names.insert(name).second, "safetensors", "two tensors are named '", name, "'");
    const Encoded e = encode(name, values);
    std::string shape;
    for (std::size_t i = 0; i < e.shape.size(); ++i)
      append(shape, i ? "," : "", std::to_string(e.shape[i]));
    // [begin, end): bytes of the data section, the first byte after the header being 0
    append(header, ",", json_string(name), ":{\"dtype\":\"", e.dtype, "\",\"shape\":[", shape,
           "],\"data_offsets\":[", std::to_string(data.size()), ",",
           std::to_string(data.size() + e.bytes), "]}");
    data.append(e.data, e.bytes);
  }
  header += "}";
  header.append((8 - header.size() % 8) % 8, ' ');  // the values start 8-byte aligned
  std::string bytes(8, '\0');
  const std::uint64_t length = header.size();
  for (int i = 0; i < 8; ++i) bytes[i] = char((length >> (8 * i)) & 0xFF);  // little-endian
  append(bytes, header, data);
  return bytes;
}
// [safetensors-bytes]

void save_safetensors(const std::string& path, const SafetensorsEntries& entries,
                      const Metadata& metadata) {
  write_file_atomically(path, safetensors_bytes(entries, metadata));
}

}  // namespace ag
