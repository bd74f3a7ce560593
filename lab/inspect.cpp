#include "lab/inspect.hpp"

#include <nlohmann/json.hpp>

#include "chapters/01-attention/encoding_registry.hpp"
#include "lab/memory.hpp"

namespace pe {

namespace {

// The query `vector` of one head (width vector.size()), placed at each of `positions` in turn
// and passed through the rotate hook of the part an attention layer gets from the encoding:
// what RoPE does to one vector, or nothing for encodings that do not rotate. Every one of the
// `heads` gets the vector (a part may check their number: PoPE's phase bias has one row per
// head); the first head's result is returned, of whatever width the hook gives (PoPE: 2D).
nlohmann::json rotate_at_positions(const PositionalEncoding& encoding,
                                   const std::vector<double>& vector, std::int64_t heads,
                                   const std::vector<std::int64_t>& positions) {
  const auto D = std::int64_t(vector.size());
  std::vector<double> every_head;
  for (std::int64_t h = 0; h < heads; ++h)
    every_head.insert(every_head.end(), vector.begin(), vector.end());
  const ag::Tensor q = ag::from_vector(every_head, {1, heads, 1, D}, ag::Dtype::f64);
  ag::Rng rng(1);  // for parts with parameters of their own (PoPE's phase bias: 0 at first)
  const auto part = encoding.make_attention_part(rng);
  std::vector<std::vector<double>> rows;
  for (std::int64_t p : positions) {  // one token at position p, the same vector as query and key
    std::vector<double> turned = part->rotate(q, q, p).first.to_vector();
    turned.resize(turned.size() / std::size_t(heads));
    rows.push_back(turned);
  }
  return {{"positions", positions}, {"values", rows}};
}

}  // namespace

nlohmann::json inspect_encoding(const InspectRequest& request) {
  // The command line's ranges, for callers without one (the live pages).
  auto in_range = [](const char* name, std::int64_t value, std::int64_t high) {
    ag::check(value >= 1 && value <= high, "inspect", "--", name, " must be from 1 to ", high,
              ", got ", value);
  };
  in_range("length", request.length, 100000);
  in_range("dim", request.dim, 65536);
  in_range("heads", request.heads, 1024);
  ag::check(request.dim % request.heads == 0, "inspect", "--dim ", request.dim,
            " is not divisible by --heads ", request.heads);
  EncodingSpec spec;
  spec.model.width = request.dim;
  spec.model.heads = request.heads;
  spec.max_length = request.length;
  spec.options = request.options;
  // What the tables and the rotated vectors will take, checked before they are made.
  const double rotated = request.vector.empty()
                             ? 0
                             : double(request.positions.empty() ? std::size_t(request.length)
                                                                : request.positions.size()) *
                                   double(request.vector.size());
  require_memory(estimated_inspect_bytes(request.encoding, spec, request.length, rotated),
                 "inspecting " + request.encoding + " at length " + std::to_string(request.length) +
                     " and width " + std::to_string(request.dim));
  ag::Rng rng(0);
  auto encoding = make_encoding(request.encoding, spec, rng);
  nlohmann::json out = {{"encoding", request.encoding},
                        {"length", request.length},
                        {"dim", request.dim},
                        {"heads", request.heads},
                        {"options", spec.options}};
  for (const auto& [name, tensor] : encoding->inspect(request.length)) {
    out[name] = {{"shape", tensor.shape()}, {"values", tensor.to_vector()}};
  }
  if (!request.vector.empty()) {
    const std::int64_t D = request.dim / request.heads;
    ag::check(std::int64_t(request.vector.size()) == D, "inspect",
              "--vector needs D = dim / heads = ", D, " numbers, got ", request.vector.size());
    std::vector<std::int64_t> positions = request.positions;
    if (positions.empty())  // default: every position 0 .. length-1
      for (std::int64_t p = 0; p < request.length; ++p) positions.push_back(p);
    out["rotated"] = rotate_at_positions(*encoding, request.vector, request.heads, positions);
  } else {
    ag::check(request.positions.empty(), "inspect", "--positions needs --vector");
  }
  return out;
}

}  // namespace pe
