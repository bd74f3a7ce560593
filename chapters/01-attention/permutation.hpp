// Two small tools for showing permutation equivariance: reorder the positions of a batch of
// sequences, and measure how far two tensors are apart.
#pragma once
#include <cstdint>
#include <vector>

#include "ag/tensor.hpp"

namespace pe {

/// x [B, T, C] -> [B, T, C] whose position i holds x's position order[i].
ag::Tensor reorder_positions(const ag::Tensor& x, const std::vector<std::int64_t>& order);

/// max |a - b| over all elements (same shapes).
double max_abs_difference(const ag::Tensor& a, const ag::Tensor& b);

}  // namespace pe
