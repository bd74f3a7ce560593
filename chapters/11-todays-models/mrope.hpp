// M-RoPE, Qwen2-VL's multimodal RoPE (transformers' apply_multimodal_rotary_pos_emb and
// get_rope_index): a token's position is a vector (t, h, w), time, row and column, and the
// d/2 planes of RoPE are split into three consecutive sections, mrope_section = [s_t, s_h, s_w]
// (Qwen2-VL: [16, 24, 24] of 64 planes), each turned by its own coordinate:
//   plane i turns by t theta_i for i < s_t, by h theta_i for s_t <= i < s_t + s_h, and by
//   w theta_i after,
// with RoPE's theta_i = base^(-2i/d) over the whole head (rotate-half layout). A text token
// sits at t = h = w = p, where this is plain RoPE; the patches of an image share t and take
// their row and column for h and w, so a score between two patches depends on (dt, dh, dw).
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include "ag/tensor.hpp"

namespace pe {

/// One token's position in M-RoPE: time, row, column.
struct MropePosition {
  std::int64_t t = 0;  ///< the temporal coordinate (a frame, or the text position)
  std::int64_t h = 0;  ///< the row of a patch (the text position for text)
  std::int64_t w = 0;  ///< the column of a patch (the text position for text)
};

/// Which coordinate turns each plane: 0 (t), 1 (h) or 2 (w) for planes 0 .. s_t+s_h+s_w-1,
/// the sections in order. mrope_section holds three non-negative sizes with a positive sum;
/// anything else is an ag::Error.
std::vector<int> mrope_plane_axes(const std::vector<std::int64_t>& mrope_section);

/// cos and sin of each token's angles, [N, d/2] for N positions: row n, plane i holds the
/// angle x_n theta_i, x the coordinate mrope_plane_axes gives plane i. theta has d/2 entries,
/// as many as the sections' sum (an ag::Error otherwise). Computed in double, then rounded to
/// dtype. Row n belongs to token n (not to a position): chapter 5's apply_rotary with
/// positions 0 and the half layout turns token n of x [..., N, D] by it.
std::pair<ag::Tensor, ag::Tensor> mrope_tables(const std::vector<MropePosition>& positions,
                                               const std::vector<double>& theta,
                                               const std::vector<std::int64_t>& mrope_section,
                                               ag::Dtype dtype);

/// Appends `count` text tokens, as get_rope_index places them: t = h = w = p for p = first,
/// first + 1, ..., where first is one past the largest coordinate appended so far (0 for the
/// first token).
void append_mrope_text(std::vector<MropePosition>& positions, std::int64_t count);

/// Appends an image or video of grid_t x grid_h x grid_w patches (as the language model sees
/// them: Qwen2-VL's image_grid_thw with h and w divided by spatial_merge_size), frame by frame
/// and row by row: (first + i, first + j, first + k) for frame i, row j, column k, with first
/// as for append_mrope_text. Each size at least 1.
void append_mrope_grid(std::vector<MropePosition>& positions, std::int64_t grid_t,
                       std::int64_t grid_h, std::int64_t grid_w);

}  // namespace pe
