// Sinusoidal positional encoding (Vaswani et al., 2017): a fixed table of sines and cosines,
// one frequency per pair of dimensions, added to the token embeddings.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "chapters/01-attention/positional_encoding.hpp"

namespace pe {

/// Where the sine and the cosine of frequency i sit in a row of the table.
enum class SinusoidalLayout {
  interleaved,  ///< PE(pos, 2i) = sin, PE(pos, 2i+1) = cos: the paper's layout
  concatenated  ///< sines in 0 .. C/2-1, cosines in C/2 .. C-1 (tensor2tensor and others)
};

/// "interleaved" or "concatenated"; anything else is an ag::Error.
SinusoidalLayout sinusoidal_layout_from(const std::string& name);
/// The name sinusoidal_layout_from accepts for `layout`.
std::string sinusoidal_layout_name(SinusoidalLayout layout);

/// PE [length, width] in `dtype`: PE(pos, 2i) = sin(pos / base^(2i/width)),
/// PE(pos, 2i+1) = cos(pos / base^(2i/width)) (interleaved), computed in double.
/// width must be even and positive (an odd width is an ag::Error), base > 0.
ag::Tensor sinusoidal_table(std::int64_t length, std::int64_t width, double base,
                            SinusoidalLayout layout, ag::Dtype dtype);

/// The options of `pe train --encoding sinusoidal`.
struct SinusoidalOptions {
  double base = 10000;  ///< the wavelengths run from 2 pi to base * 2 pi
  /// sin and cos interleaved, or in two halves
  SinusoidalLayout layout = SinusoidalLayout::interleaved;
};

/// The fixed table through the embed hook. No parameters.
class SinusoidalEncoding : public PositionalEncoding {
 public:
  /// width C, even and positive.
  explicit SinusoidalEncoding(std::int64_t width, SinusoidalOptions options = {});
  std::string name() const override { return "sinusoidal"; }
  /// x [B, T, C] at `positions` -> x + the rows of PE at the positions (offset .. offset+T-1
  /// for contiguous ones)
  ag::Tensor embed(const ag::Tensor& x, const Positions& positions) const override;
  /// "pe" [length, C] in float64.
  std::vector<std::pair<std::string, ag::Tensor>> inspect(std::int64_t length) const override;

  std::int64_t width() const { return width_; }                  ///< C
  const SinusoidalOptions& options() const { return options_; }  ///< as constructed

 private:
  std::int64_t width_;
  SinusoidalOptions options_;
};

/// Adds "sinusoidal" (options base, layout) to the encoding registry.
void register_ch02_encodings();

}  // namespace pe
