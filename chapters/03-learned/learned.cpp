#include "chapters/03-learned/learned.hpp"

#include "ag/random.hpp"
#include "chapters/01-attention/encoding_registry.hpp"

namespace pe {

using ag::Tensor;

LearnedEncoding::LearnedEncoding(std::int64_t max_len, std::int64_t width, ag::Rng& rng,
                                 double stddev, ag::Dtype dtype)
    : max_len_(max_len), width_(width) {
  ag::check(max_len > 0 && width > 0, "learned", "max_len and width must be positive, got ",
            max_len, " and ", width);
  // TASK 3.1 begin: the table as a trainable parameter
  table = ag::randn({max_len, width}, rng, dtype, stddev);
  register_parameter("table", table);
  // TASK 3.1 end
}

// [learned-embed]
Tensor LearnedEncoding::embed(const Tensor& x, const Positions& positions) const {
  ag::check(x.dim() == 3 && x.size(2) == width_, "learned", "expected x [B, T, ", width_, "], got ",
            ag::shape_string(x.shape()));
  // TASK 3.2 begin: the learned table's bounds check and rows
  const std::int64_t end = positions.end(x.size(1));  // one past the last position
  // No clamping, no wrapping: a row that was never trained does not exist.
  ag::check(end <= max_len_, "learned", "positions up to ", end - 1, " (", x.size(1),
            " tokens from position ", positions.first(), ") need ", end,
            " rows but the table has max_len ", max_len_);
  return ag::add(x, rows_at(table, positions, x.size(1), "learned"));
  // TASK 3.2 end
}
// [learned-embed]

std::vector<std::pair<std::string, Tensor>> LearnedEncoding::inspect(std::int64_t length) const {
  ag::check(length >= 0 && length <= max_len_, "learned", "inspect length ", length,
            " exceeds max_len ", max_len_);
  return {{"table", ag::slice(table, 0, 0, length)}};
}

void register_ch03_encodings() {
  register_encoding(
      {"learned",
       "03",
       "a trainable table of one vector per position, added to the embeddings",
       {"max_len"},
       [](const EncodingSpec& spec, ag::Rng& rng) {
         const std::int64_t max_len =
             integer_option(spec, "learned", "max_len", spec.max_length, 1, kLargestTableOption);
         return std::make_shared<LearnedEncoding>(max_len, spec.model.width, rng, 0.02, spec.dtype);
       }});
}

}  // namespace pe
