#include "chapters/11-todays-models/mrope.hpp"

#include <algorithm>
#include <cmath>

namespace pe {

std::vector<int> mrope_plane_axes(const std::vector<std::int64_t>& mrope_section) {
  ag::check(mrope_section.size() == 3, "mrope", "mrope_section needs three sizes (t, h, w), got ",
            mrope_section.size());
  std::int64_t planes = 0;
  for (std::int64_t size : mrope_section) {
    ag::check(size >= 0, "mrope", "a section size must not be negative, got ", size);
    planes += size;
  }
  ag::check(planes > 0, "mrope", "the sections hold no plane");
  std::vector<int> axes;
  for (int axis = 0; axis < 3; ++axis)
    axes.insert(axes.end(), static_cast<std::size_t>(mrope_section[axis]), axis);
  return axes;
}

// [mrope-tables]
std::pair<ag::Tensor, ag::Tensor> mrope_tables(const std::vector<MropePosition>& positions,
                                               const std::vector<double>& theta,
                                               const std::vector<std::int64_t>& mrope_section,
                                               ag::Dtype dtype) {
  const std::vector<int> axes = mrope_plane_axes(mrope_section);
  ag::check(axes.size() == theta.size(), "mrope", "the sections hold ", axes.size(),
            " planes but there are ", theta.size(), " frequencies");
  const auto N = static_cast<std::int64_t>(positions.size());
  const auto planes = static_cast<std::int64_t>(theta.size());
  std::vector<double> cos(static_cast<std::size_t>(N * planes)), sin(cos.size());
  for (std::int64_t n = 0; n < N; ++n) {
    const MropePosition& p = positions[static_cast<std::size_t>(n)];
    const std::int64_t coordinate[3] = {p.t, p.h, p.w};
    for (std::int64_t i = 0; i < planes; ++i) {
      // plane i turns by its section's coordinate: t, h or w times theta_i
      const double angle = double(coordinate[axes[i]]) * theta[i];
      cos[n * planes + i] = std::cos(angle);
      sin[n * planes + i] = std::sin(angle);
    }
  }
  return {ag::from_vector(cos, {N, planes}, dtype), ag::from_vector(sin, {N, planes}, dtype)};
}
// [mrope-tables]

namespace {

// One past the largest coordinate so far: where get_rope_index starts the next segment.
std::int64_t next_start(const std::vector<MropePosition>& positions) {
  std::int64_t next = 0;
  for (const MropePosition& p : positions) next = std::max({next, p.t + 1, p.h + 1, p.w + 1});
  return next;
}

}  // namespace

void append_mrope_text(std::vector<MropePosition>& positions, std::int64_t count) {
  ag::check(count >= 0, "mrope", "the number of text tokens must not be negative, got ", count);
  const std::int64_t first = next_start(positions);
  for (std::int64_t p = first; p < first + count; ++p) positions.push_back({p, p, p});
}

void append_mrope_grid(std::vector<MropePosition>& positions, std::int64_t grid_t,
                       std::int64_t grid_h, std::int64_t grid_w) {
  ag::check(grid_t >= 1 && grid_h >= 1 && grid_w >= 1, "mrope",
            "a grid needs at least one patch along each axis, got ", grid_t, " x ", grid_h, " x ",
            grid_w);
  const std::int64_t first = next_start(positions);
  for (std::int64_t i = 0; i < grid_t; ++i)
    for (std::int64_t j = 0; j < grid_h; ++j)
      for (std::int64_t k = 0; k < grid_w; ++k)
        positions.push_back({first + i, first + j, first + k});
}

}  // namespace pe
