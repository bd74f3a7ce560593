#include "chapters/02-sinusoidal/sinusoidal.hpp"

#include <cmath>

#include "chapters/01-attention/encoding_registry.hpp"

namespace pe {

using ag::Tensor;

SinusoidalLayout sinusoidal_layout_from(const std::string& name) {
  if (name == "interleaved") return SinusoidalLayout::interleaved;
  if (name == "concatenated") return SinusoidalLayout::concatenated;
  throw ag::Error("sinusoidal: unknown layout '" + name +
                  "' (expected interleaved or concatenated)");
}

std::string sinusoidal_layout_name(SinusoidalLayout layout) {
  return layout == SinusoidalLayout::interleaved ? "interleaved" : "concatenated";
}

// [sinusoidal-table]
Tensor sinusoidal_table(std::int64_t length, std::int64_t width, double base,
                        SinusoidalLayout layout, ag::Dtype dtype) {
  ag::check(length >= 0, "sinusoidal_table", "length must not be negative, got ", length);
  ag::check(width > 0 && width % 2 == 0, "sinusoidal_table",
            "width must be even and positive (a sine and a cosine per frequency), got ", width);
  ag::check(base > 0, "sinusoidal_table", "base must be positive, got ", base);
  // TASK 2.1 begin: the sinusoid table
  const std::int64_t pairs = width / 2;
  std::vector<double> pe(static_cast<std::size_t>(length * width));
  for (std::int64_t i = 0; i < pairs; ++i) {
    const double w = std::pow(base, -2.0 * double(i) / double(width));  // w_i = base^(-2i/C)
    const std::int64_t sin_col = layout == SinusoidalLayout::interleaved ? 2 * i : i;
    const std::int64_t cos_col = layout == SinusoidalLayout::interleaved ? 2 * i + 1 : pairs + i;
    for (std::int64_t pos = 0; pos < length; ++pos) {
      pe[pos * width + sin_col] = std::sin(double(pos) * w);
      pe[pos * width + cos_col] = std::cos(double(pos) * w);
    }
  }
  return ag::from_vector(pe, {length, width}, dtype);
  // TASK 2.1 end
}
// [sinusoidal-table]

SinusoidalEncoding::SinusoidalEncoding(std::int64_t width, SinusoidalOptions options)
    : width_(width), options_(options) {
  ag::check(width > 0 && width % 2 == 0, "sinusoidal",
            "model width must be even and positive (a sine and a cosine per frequency), got ",
            width);
  // base 1 would give every pair the same frequency, and one below 1 frequencies that grow:
  // refused as RoPE refuses them (rope.cpp).
  ag::check(options.base > 1, "sinusoidal", "base must be greater than 1, got ", options.base);
}

// [sinusoidal-embed]
Tensor SinusoidalEncoding::embed(const Tensor& x, const Positions& positions) const {
  ag::check(x.dim() == 3 && x.size(2) == width_, "sinusoidal", "expected x [B, T, ", width_,
            "], got ", ag::shape_string(x.shape()));
  // TASK 2.2 begin: add the rows of the table to the embeddings
  // The table in x's dtype (float64 under gradcheck: Module::to converts parameters only, and
  // this table is a constant), up to the last position. The rows at the positions (offset ..
  // offset+T-1 when contiguous), broadcast over the batch.
  const Tensor table =
      sinusoidal_table(positions.end(x.size(1)), width_, options_.base, options_.layout, x.dtype());
  return ag::add(x, rows_at(table, positions, x.size(1), "sinusoidal"));
  // TASK 2.2 end
}
// [sinusoidal-embed]

std::vector<std::pair<std::string, Tensor>> SinusoidalEncoding::inspect(std::int64_t length) const {
  return {{"pe", sinusoidal_table(length, width_, options_.base, options_.layout, ag::Dtype::f64)}};
}

void register_ch02_encodings() {
  register_encoding({"sinusoidal",
                     "02",
                     "fixed sines and cosines of position added to the embeddings",
                     {"base", "layout"},
                     [](const EncodingSpec& spec, ag::Rng&) {
                       SinusoidalOptions options;
                       options.base = number_option(spec, "sinusoidal", "base", options.base);
                       if (auto it = spec.options.find("layout"); it != spec.options.end())
                         options.layout = sinusoidal_layout_from(it->second);
                       return std::make_shared<SinusoidalEncoding>(spec.model.width, options);
                     }});
}

}  // namespace pe
