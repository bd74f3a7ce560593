// xPos (Sun et al., "A Length-Extrapolatable Transformer", 2022): RoPE whose planes also decay.
// Plane i of a query at position m is turned by RoPE and scaled by zeta_i^(m/B); plane i of a
// key at position n is turned and scaled by zeta_i^(-n/B), with
//   zeta_i = (2i/d + gamma) / (1 + gamma),  i = 0 .. d/2 - 1,
// so that plane i's share of q_m . k_n is RoPE's times zeta_i^((m-n)/B): a function of the
// offset alone, which shrinks with distance in the fast planes (small zeta_i) and hardly at
// all in the slow ones (zeta_i near 1). torchscale's defaults: gamma = 0.4, B = scale_base = 512.
// Parameter-free. It reaches RoPE through chapter 5's rotation (RotaryPositions) and scales
// the turned q and k afterwards (scaling a plane commutes with turning it).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "chapters/05-rope/rope.hpp"

namespace pe {

/// The options of `pe train --encoding xpos`.
struct XposOptions {
  double base = 10000;      ///< RoPE's theta_i = base^(-2i/d)
  double gamma = 0.4;       ///< zeta_i = (2i/d + gamma) / (1 + gamma)
  double scale_base = 512;  ///< B: the scale's exponent is position / B
};

/// An ag::Error unless base > 1, gamma > 0 and scale_base > 0 (all finite).
void check_xpos_options(const XposOptions& options);

/// zeta_i = (2i/d + gamma) / (1 + gamma) for the d/2 planes of a head of width d (even), each
/// in (0, 1).
std::vector<double> xpos_zeta(std::int64_t dim, double gamma);

/// zeta_i^(sign * m / B) for the positions m of `count` tokens at `positions` (an offset o
/// means o .. o+T-1), for each coordinate of the adjacent layout (plane i holds coordinates 2i
/// and 2i + 1): sign = +1 for queries, -1 for keys. Computed in double, then rounded.
/// -> [T, d]
ag::Tensor xpos_scale(std::int64_t count, const Positions& positions, std::int64_t dim,
                      const XposOptions& options, double sign, ag::Dtype dtype);

/// xPos's part in each attention layer, through the rotate hook.
class XposPositions : public AttentionPositions {
 public:
  /// head_width D (even): every coordinate is turned and scaled.
  XposPositions(std::int64_t head_width, const XposOptions& options = {});
  /// q, k [B, H, T, D] at `positions` -> RoPE's turn, then q times
  /// zeta^(m/B) and k times zeta^(-n/B). Keys are scaled by their own position when they are
  /// new, so a cached key needs nothing more: the KV cache works as for RoPE.
  std::pair<ag::Tensor, ag::Tensor> rotate(const ag::Tensor& q, const ag::Tensor& k,
                                           const Positions& positions) const override;

 private:
  std::int64_t head_width_;
  XposOptions options_;
  RotaryPositions rotary_;
};

/// xPos: nothing before the first block; each attention layer gets an XposPositions.
class XposEncoding : public PositionalEncoding {
 public:
  /// head_width D (even); options as check_xpos_options accepts them.
  XposEncoding(std::int64_t head_width, const XposOptions& options = {});
  std::string name() const override { return "xpos"; }
  /// An XposPositions with this encoding's head width and options.
  std::shared_ptr<AttentionPositions> make_attention_part(ag::Rng& rng) const override;
  /// "zeta" [d/2]; "frequencies" [d/2] (RoPE's theta_i); "query_scale" [length, d/2]:
  /// zeta_i^(m/B) for m = 0 .. length-1 (a key's is its inverse).
  std::vector<std::pair<std::string, ag::Tensor>> inspect(std::int64_t length) const override;
  const XposOptions& options() const { return options_; }  ///< as constructed

 private:
  std::int64_t head_width_;
  XposOptions options_;
};

}  // namespace pe
