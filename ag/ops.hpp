// The primitive ops. Each has one backward rule; everything else is built from these.
// Binary elementwise ops broadcast like NumPy, and their gradients are summed back to
// each input's shape in one place (unbroadcast).
#pragma once
#include <cstdint>
#include <vector>

#include "ag/tensor.hpp"

namespace ag {

// --- elementwise, broadcasting ------------------------------------------------------------
/// a + b, broadcasting.  a: [...a], b: [...b] -> the broadcast shape
Tensor add(const Tensor& a, const Tensor& b);
/// a - b, broadcasting.  a: [...a], b: [...b] -> the broadcast shape
Tensor sub(const Tensor& a, const Tensor& b);
/// a * b elementwise, broadcasting.  a: [...a], b: [...b] -> the broadcast shape
Tensor mul(const Tensor& a, const Tensor& b);
/// a / b elementwise, broadcasting.  a: [...a], b: [...b] -> the broadcast shape
Tensor div(const Tensor& a, const Tensor& b);
/// a + b for a constant b.  a: [...] -> [...]
Tensor add(const Tensor& a, double b);
/// a * b for a constant b.  a: [...] -> [...]
Tensor mul(const Tensor& a, double b);
/// base^exponent elementwise, broadcasting, with a gradient for both. The exponent's,
/// base^exponent * log(base), is taken as 0 where base = 0 (its limit for a positive
/// exponent, as PyTorch takes it); a negative base with a fractional exponent gives NaN.
/// base: [...a], exponent: [...b] -> the broadcast shape
Tensor pow(const Tensor& base, const Tensor& exponent);
Tensor operator+(const Tensor& a, const Tensor& b);  ///< add(a, b)
Tensor operator-(const Tensor& a, const Tensor& b);  ///< sub(a, b)
Tensor operator*(const Tensor& a, const Tensor& b);  ///< mul(a, b)
Tensor operator/(const Tensor& a, const Tensor& b);  ///< div(a, b)
Tensor operator+(const Tensor& a, double b);         ///< add(a, b)
Tensor operator-(const Tensor& a, double b);         ///< add(a, -b)
Tensor operator*(const Tensor& a, double b);         ///< mul(a, b)
Tensor operator*(double a, const Tensor& b);         ///< mul(b, a)
Tensor operator/(const Tensor& a, double b);         ///< mul(a, 1 / b)
Tensor operator-(const Tensor& a);                   ///< neg(a)

// --- elementwise, unary --------------------------------------------------------------------
Tensor neg(const Tensor& x);   ///< -x.  [...] -> [...]
Tensor exp(const Tensor& x);   ///< e^x.  [...] -> [...]
Tensor log(const Tensor& x);   ///< natural log, for x > 0.  [...] -> [...]
Tensor sqrt(const Tensor& x);  ///< square root, for x >= 0.  [...] -> [...]
Tensor tanh(const Tensor& x);  ///< hyperbolic tangent.  [...] -> [...]
Tensor sin(const Tensor& x);   ///< sine (radians).  [...] -> [...]
Tensor cos(const Tensor& x);   ///< cosine (radians).  [...] -> [...]
/// x to a constant power.  [...] -> [...]
Tensor pow(const Tensor& x, double exponent);
/// max(x, 0); the gradient at 0 is 0.  [...] -> [...]
Tensor relu(const Tensor& x);
/// |x|; the gradient is sign(x), 0 at 0.  [...] -> [...]
Tensor abs(const Tensor& x);
/// log(1 + x) for x > -1, accurate where x is small (std::log1p).  [...] -> [...]
Tensor log1p(const Tensor& x);
/// The logistic function 1 / (1 + e^-x), in (0, 1).  [...] -> [...]
Tensor sigmoid(const Tensor& x);
/// log(1 + e^x), positive, computed as max(x, 0) + log1p(e^-|x|) so that no e^x overflows;
/// its gradient is sigmoid(x).  [...] -> [...]
Tensor softplus(const Tensor& x);
/// log(sigmoid(x)), negative, computed as min(x, 0) - log1p(e^-|x|): exact where the naive
/// log(sigmoid(x)) gives -inf (x = -1000 -> -1000). Its gradient is sigmoid(-x), not
/// 1 - sigmoid(x), which rounds to 0 for x > 37 in double. (The Forgetting Transformer's
/// forget gates, summed as logs.)  [...] -> [...]
Tensor log_sigmoid(const Tensor& x);
/// x where mask == 0, `value` where mask != 0. mask is a constant broadcastable to x
/// (the causal mask); no gradient flows to masked entries.
/// x [B, H, T, T], mask [T, T] -> [B, H, T, T]
Tensor masked_fill(const Tensor& x, const Tensor& mask, double value);

// --- reductions ----------------------------------------------------------------------------
Tensor sum(const Tensor& x);  ///< all elements -> []
/// The sum over the given axes (negative ones count from the end); keepdim keeps them
/// with extent 1.  [B, T, C], axes {2} -> [B, T] (or [B, T, 1])
Tensor sum(const Tensor& x, std::vector<std::int64_t> axes, bool keepdim = false);
Tensor mean(const Tensor& x);  ///< the mean of all elements -> []
/// The mean over the given axes, as sum() with the same axes divided by their count.
/// [B, T, C], axes {2} -> [B, T] (or [B, T, 1])
Tensor mean(const Tensor& x, std::vector<std::int64_t> axes, bool keepdim = false);
/// Maximum along one axis. The gradient goes to the first maximal element.
/// [B, T, C], axis 2 -> [B, T] (or [B, T, 1])
Tensor max(const Tensor& x, std::int64_t axis, bool keepdim = false);

// --- scans ---------------------------------------------------------------------------------
/// The running sum along one axis (negative axes count from the end): out[i] = the sum of x[t]
/// over t <= i, or over t >= i when reverse (CoPE's positions, gates summed from each key up
/// to the query). The gradient is the running sum of the incoming one in the other direction.
/// [B, H, T, T], axis 3 -> [B, H, T, T]
Tensor cumsum(const Tensor& x, std::int64_t axis, bool reverse = false);

// --- products ------------------------------------------------------------------------------
/// a: [..., M, K] @ b: [..., K, N] -> [..., M, N]. The batch dims must be equal, or b may be
/// a plain [K, N] matrix shared by every batch (a Linear layer's weight).
Tensor matmul(const Tensor& a, const Tensor& b);
/// a: [..., M, K] @ b^T with b: [..., N, K] -> [..., M, N], without copying b into its
/// transpose (attention's q k^T). The same batch rules as matmul.
Tensor matmul_transposed(const Tensor& a, const Tensor& b);
/// a^T @ b with a: [..., K, M], b: [..., K, N] -> [..., M, N], without copying a into its
/// transpose (the gradient of a weight). The batch dims must be equal; a 2-d a needs a 2-d b.
Tensor transpose_matmul(const Tensor& a, const Tensor& b);

// --- shapes (results are contiguous copies unless said otherwise) ---------------------------
/// Same values, new shape with the same element count; one entry may be -1. Shares storage.
/// [B, T, C], {B, T, H, D} -> [B, T, H, D]
Tensor reshape(const Tensor& x, Shape shape);
/// Reorders axes: result axis i is input axis axes[i].
Tensor permute(const Tensor& x, std::vector<std::int64_t> axes);
/// Swaps two axes (a permute).  [B, T, C], 1, 2 -> [B, C, T]
Tensor transpose(const Tensor& x, std::int64_t axis0, std::int64_t axis1);
/// Elements start..end-1 along `axis` (end exclusive; negative values count from the end).
/// [B, T, C], axis 1 -> [B, end - start, C]
Tensor slice(const Tensor& x, std::int64_t axis, std::int64_t start, std::int64_t end);
/// Joins tensors whose shapes agree except along `axis`.
/// [B, T, C1], [B, T, C2], axis 2 -> [B, T, C1 + C2]
Tensor concat(const std::vector<Tensor>& parts, std::int64_t axis);

/// Integer indices with a shape, e.g. token ids [B, T].
struct Indices {
  std::vector<std::int64_t> values;  ///< row-major, numel(shape) of them
  Shape shape;                       ///< e.g. [B, T]
};
/// Rows of table: table [V, C], ids [...] -> [..., C]. The gradient is scattered back into
/// the rows that were used. Every id must lie in [0, V).
Tensor embedding(const Tensor& table, const Indices& ids);
/// One column per (row, slot), the same choice for every leading position: x [..., M, R] and
/// index [M, N] with values in [0, R) -> [..., M, N], out[..., i, j] = x[..., i, index[i, j]].
/// The gradient is scatter_add_columns of the incoming one (a column picked twice gets both).
Tensor gather_columns(const Tensor& x, const Indices& index);
/// The adjoint of gather_columns: x [..., M, N] and index [M, N] with values in [0, width)
/// -> [..., M, width], out[..., i, r] = the sum of x[..., i, j] over the j with index[i, j] = r
/// (0 where none). The gradient is gather_columns of the incoming one.
Tensor scatter_add_columns(const Tensor& x, const Indices& index, std::int64_t width);
/// A row of values at the integer positions 0..P-1, read at fractional positions by linear
/// interpolation (CoPE's position logits): p is clamped to [0, P-1], then
/// out[..., k] = (1 - w) table[..., floor(p)] + w table[..., ceil(p)] with w = p - floor(p).
/// The leading dims of the two must be equal (no broadcasting); a NaN position is an error.
/// The gradient to table adds (1 - w) g and w g into the two columns read; the one to
/// positions is (table[ceil] - table[floor]) g inside (0, P-1) and 0 where p was clamped. At an
/// integer p, where the function has a kink, floor = ceil and that gradient is 0 too (as in
/// CoPE's own code).  table [B, H, T, P], positions [B, H, T, T] -> [B, H, T, T]
Tensor gather_interpolated(const Tensor& table, const Tensor& positions);

}  // namespace ag
