// Two small tools for showing permutation equivariance: reorder the positions of a batch of
// sequences, and measure how far two tensors are apart.
#pragma once
#include <algorithm>
#include <cmath>
#include <vector>

#include "ag/ops.hpp"

namespace pe {

/// x [B, T, C] -> [B, T, C] whose position i holds x's position order[i].
inline ag::Tensor reorder_positions(const ag::Tensor& x, const std::vector<std::int64_t>& order) {
  std::vector<ag::Tensor> rows;
  for (auto i : order) rows.push_back(ag::slice(x, 1, i, i + 1));
  return ag::concat(rows, 1);
}

/// max |a - b| over all elements (same shapes).
inline double max_abs_difference(const ag::Tensor& a, const ag::Tensor& b) {
  ag::check(a.shape() == b.shape(), "max_abs_difference", "shapes differ: ",
            ag::shape_string(a.shape()), " and ", ag::shape_string(b.shape()));
  const auto va = a.to_vector(), vb = b.to_vector();
  double worst = 0;
  for (std::size_t i = 0; i < va.size(); ++i) worst = std::max(worst, std::abs(va[i] - vb[i]));
  return worst;
}

}  // namespace pe
