#include "base/png_check.hpp"

#include <array>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

namespace pe {

namespace {

// The CRC-32 of PNG chunks (ISO 3309, polynomial 0xEDB88320), over type and data.
std::uint32_t crc32(const unsigned char* bytes, std::size_t size) {
  static const std::array<std::uint32_t, 256> table = [] {
    std::array<std::uint32_t, 256> t{};
    for (std::uint32_t n = 0; n < 256; ++n) {
      std::uint32_t c = n;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[n] = c;
    }
    return t;
  }();
  std::uint32_t c = 0xFFFFFFFFu;
  for (std::size_t i = 0; i < size; ++i) c = table[(c ^ bytes[i]) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

std::uint32_t big_endian(const unsigned char* p) {
  return std::uint32_t(p[0]) << 24 | std::uint32_t(p[1]) << 16 | std::uint32_t(p[2]) << 8 | p[3];
}

}  // namespace

std::string png_problem(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "it cannot be opened";
  const std::vector<unsigned char> bytes{std::istreambuf_iterator<char>(in), {}};
  static const unsigned char kSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  if (bytes.size() < 8 || std::memcmp(bytes.data(), kSignature, 8) != 0)
    return bytes.empty() ? "it is empty" : "it does not start with the PNG signature";
  std::size_t at = 8;
  for (int index = 0;; ++index) {
    if (bytes.size() - at < 12) return "it ends inside a chunk (no IEND)";
    const std::uint32_t length = big_endian(&bytes[at]);
    if (length > bytes.size() - at - 12) return "it ends inside a chunk (no IEND)";
    const unsigned char* type = &bytes[at + 4];
    const std::string name(reinterpret_cast<const char*>(type), 4);
    if (index == 0 &&
        (name != "IHDR" || length != 13 || big_endian(type + 4) == 0 || big_endian(type + 8) == 0))
      return "its first chunk is not a valid IHDR header";
    if (crc32(type, 4 + length) != big_endian(type + 4 + length))
      return "chunk " + std::to_string(index) + " (" + name + ") has a wrong CRC";
    at += 12 + length;
    if (name == "IEND") return at == bytes.size() ? "" : "it has bytes after its IEND chunk";
  }
}

}  // namespace pe
