// A float64 gradient check for every primitive op and composite, including broadcasting.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "ag/functional.hpp"
#include "ag/tape.hpp"
#include "ag/tensor_bytes.hpp"
#include "ag/tests/gradcheck_util.hpp"

using namespace ag;
using Inputs = std::vector<Tensor>;

// grades: task 0.3
TEST(OpGradcheck, AddSubMulDivSameShape) {
  Tensor a = random_input({3, 4}, 1), b = positive_input({3, 4}, 2);
  EXPECT_GRADCHECK([](const Inputs& x) { return add(x[0], x[1]); }, {a, b});
  EXPECT_GRADCHECK([](const Inputs& x) { return sub(x[0], x[1]); }, {a, b});
  EXPECT_GRADCHECK([](const Inputs& x) { return mul(x[0], x[1]); }, {a, b});
  EXPECT_GRADCHECK([](const Inputs& x) { return div(x[0], x[1]); }, {a, b});
}

TEST(OpGradcheck, ScalarOperandGivesTheValuesOfItsFullCopy) {
  // x op s for a one-element s runs the kernel over a buffer of copies of s; each value must
  // equal x op (s repeated to x's shape), which the same-shape kernel computes. 600 elements
  // cross the buffer's length twice.
  Tensor x = random_input({3, 200}, 37), s = positive_input({1}, 38);
  const Tensor full = add(mul(x, 0.0), s);  // s in every element of x's shape
  EXPECT_EQ(add(x, s).to_vector(), add(x, full).to_vector());
  EXPECT_EQ(sub(x, s).to_vector(), sub(x, full).to_vector());
  EXPECT_EQ(mul(x, s).to_vector(), mul(x, full).to_vector());
  EXPECT_EQ(div(x, s).to_vector(), div(x, full).to_vector());
  Tensor small = random_input({2, 3}, 39), s0 = positive_input({1}, 40);
  EXPECT_GRADCHECK([](const Inputs& v) { return div(v[0], v[1]); }, {small, s0});
}

// grades: task 0.4
TEST(OpGradcheck, BroadcastingTrailingBias) {
  Tensor x = random_input({2, 3, 4}, 3), bias = random_input({4}, 4);
  EXPECT_GRADCHECK([](const Inputs& v) { return add(v[0], v[1]); }, {x, bias});
  EXPECT_GRADCHECK([](const Inputs& v) { return mul(v[0], v[1]); }, {x, bias});
}

// grades: task 0.4
TEST(OpGradcheck, BroadcastingBothSidesAndMiddleAxes) {
  Tensor a = random_input({3, 1, 4}, 5), b = positive_input({2, 1}, 6);
  EXPECT_GRADCHECK([](const Inputs& v) { return add(v[0], v[1]); }, {a, b});
  EXPECT_GRADCHECK([](const Inputs& v) { return sub(v[1], v[0]); }, {a, b});
  EXPECT_GRADCHECK([](const Inputs& v) { return mul(v[0], v[1]); }, {a, b});
  EXPECT_GRADCHECK([](const Inputs& v) { return div(v[0], v[1]); }, {a, b});
}

TEST(OpGradcheck, ScalarOperands) {
  Tensor a = random_input({5}, 7), s = positive_input({}, 8);
  EXPECT_GRADCHECK([](const Inputs& v) { return div(v[0], v[1]); }, {a, s});
  EXPECT_GRADCHECK([](const Inputs& v) { return v[0] * 3.0 + 1.0 - v[0] / 2.0; }, {a});
}

TEST(OpGradcheck, FanOutReuse) {
  Tensor a = random_input({4}, 9);
  EXPECT_GRADCHECK(
      [](const Inputs& v) {
        Tensor b = add(v[0], v[0]);
        return mul(b, b);
      },
      {a});
}

TEST(OpGradcheck, UnaryOps) {
  Tensor x = random_input({3, 5}, 10), p = positive_input({3, 5}, 11);
  EXPECT_GRADCHECK([](const Inputs& v) { return neg(v[0]); }, {x});
  EXPECT_GRADCHECK([](const Inputs& v) { return exp(v[0]); }, {x});
  EXPECT_GRADCHECK([](const Inputs& v) { return log(v[0]); }, {p});
  EXPECT_GRADCHECK([](const Inputs& v) { return sqrt(v[0]); }, {p});
  EXPECT_GRADCHECK([](const Inputs& v) { return tanh(v[0]); }, {x});
  EXPECT_GRADCHECK([](const Inputs& v) { return sin(v[0]); }, {x});
  EXPECT_GRADCHECK([](const Inputs& v) { return cos(v[0]); }, {x});
  EXPECT_GRADCHECK([](const Inputs& v) { return pow(v[0], 3.0); }, {x});
  EXPECT_GRADCHECK([](const Inputs& v) { return pow(v[0], -1.5); }, {p});
}

TEST(OpGradcheck, ReluAwayFromTheKink) {
  // Entries at least 0.5 from zero, of both signs: the derivative is defined everywhere.
  Tensor x = from_vector({-1.5, 0.7, -0.5, 2.0, 0.9, -2.2}, {2, 3}, Dtype::f64);
  EXPECT_GRADCHECK([](const Inputs& v) { return relu(v[0]); }, {x});
}

TEST(OpGradcheck, MaskedFill) {
  Tensor x = random_input({2, 3, 3}, 12);
  Tensor causal = from_vector({0, 1, 1, 0, 0, 1, 0, 0, 0}, {3, 3}, Dtype::f64);
  EXPECT_GRADCHECK([causal](const Inputs& v) { return masked_fill(v[0], causal, -7.0); }, {x});
}

TEST(OpGradcheck, Reductions) {
  Tensor x = random_input({2, 3, 4}, 13);
  EXPECT_GRADCHECK([](const Inputs& v) { return sum(v[0]); }, {x});
  EXPECT_GRADCHECK([](const Inputs& v) { return sum(v[0], {1}); }, {x});
  EXPECT_GRADCHECK([](const Inputs& v) { return sum(v[0], {0, 2}, true); }, {x});
  EXPECT_GRADCHECK([](const Inputs& v) { return mean(v[0], {-1}); }, {x});
  EXPECT_GRADCHECK([](const Inputs& v) { return mean(v[0]); }, {x});
  // Random normals have no ties, so the maximum is differentiable.
  EXPECT_GRADCHECK([](const Inputs& v) { return max(v[0], 1); }, {x});
  EXPECT_GRADCHECK([](const Inputs& v) { return max(v[0], -1, true); }, {x});
}

// grades: task 0.2
TEST(OpGradcheck, Matmul2d) {
  Tensor a = random_input({3, 4}, 14), b = random_input({4, 5}, 15);
  EXPECT_GRADCHECK([](const Inputs& v) { return matmul(v[0], v[1]); }, {a, b});
}

// grades: task 0.2
TEST(OpGradcheck, MatmulBatched) {
  Tensor a = random_input({2, 3, 3, 4}, 16), b = random_input({2, 3, 4, 2}, 17);
  EXPECT_GRADCHECK([](const Inputs& v) { return matmul(v[0], v[1]); }, {a, b});
}

// grades: task 0.2
TEST(OpGradcheck, MatmulWithSharedWeight) {
  Tensor x = random_input({2, 3, 4}, 18), w = random_input({4, 5}, 19);
  EXPECT_GRADCHECK([](const Inputs& v) { return matmul(v[0], v[1]); }, {x, w});
}

TEST(OpGradcheck, MatmulTransposed) {
  Tensor a = random_input({2, 3, 4}, 36), b = random_input({2, 5, 4}, 37),
         w = random_input({5, 4}, 38);
  EXPECT_GRADCHECK([](const Inputs& v) { return matmul_transposed(v[0], v[1]); }, {a, b});
  EXPECT_GRADCHECK([](const Inputs& v) { return matmul_transposed(v[0], v[1]); }, {a, w});
  // The same values as transposing first.
  const auto direct = matmul_transposed(a, b).to_vector();
  const auto via_copy = matmul(a, transpose(b, 1, 2)).to_vector();
  for (std::size_t i = 0; i < direct.size(); ++i) EXPECT_NEAR(direct[i], via_copy[i], 1e-12);
}

TEST(OpGradcheck, TransposeMatmul) {
  Tensor a = random_input({2, 4, 3}, 39), b = random_input({2, 4, 5}, 40);
  Tensor a2 = random_input({4, 3}, 41), b2 = random_input({4, 5}, 42);
  EXPECT_GRADCHECK([](const Inputs& v) { return transpose_matmul(v[0], v[1]); }, {a, b});
  EXPECT_GRADCHECK([](const Inputs& v) { return transpose_matmul(v[0], v[1]); }, {a2, b2});
  // The same values as transposing first.
  const auto direct = transpose_matmul(a, b).to_vector();
  const auto via_copy = matmul(transpose(a, 1, 2), b).to_vector();
  for (std::size_t i = 0; i < direct.size(); ++i) EXPECT_NEAR(direct[i], via_copy[i], 1e-12);
}

TEST(OpGradcheck, MatmulLargeUsesRandomDirections) {
  // 40 x 30 = 1200 elements is above full_limit, so directional checks run.
  Tensor a = random_input({40, 30}, 20), b = random_input({30, 20}, 21);
  EXPECT_GRADCHECK([](const Inputs& v) { return matmul(v[0], v[1]); }, {a, b});
}

TEST(OpGradcheck, ShapeOps) {
  Tensor x = random_input({2, 3, 4}, 22);
  EXPECT_GRADCHECK([](const Inputs& v) { return reshape(v[0], {6, -1}); }, {x});
  EXPECT_GRADCHECK([](const Inputs& v) { return permute(v[0], {2, 0, 1}); }, {x});
  EXPECT_GRADCHECK([](const Inputs& v) { return transpose(v[0], 0, 2); }, {x});
  EXPECT_GRADCHECK([](const Inputs& v) { return slice(v[0], 1, 1, 3); }, {x});
  EXPECT_GRADCHECK([](const Inputs& v) { return slice(v[0], -1, -3, -1); }, {x});
}

TEST(OpGradcheck, PermuteThatOnlyMovesUnitAxesIsAnAlias) {
  Tensor x = random_input({2, 1, 3, 4}, 35);
  Tensor y = permute(x, {0, 2, 1, 3});
  EXPECT_EQ(y.shape(), (Shape{2, 3, 1, 4}));
  EXPECT_EQ(y.to_vector(), x.to_vector());  // same memory order
  EXPECT_GRADCHECK([](const Inputs& v) { return permute(v[0], {0, 2, 1, 3}); }, {x});
  EXPECT_GRADCHECK([](const Inputs& v) { return mul(permute(v[0], {2, 1, 0, 3}), 2.0); }, {x});
}

TEST(OpGradcheck, PermuteMovesEveryValueToItsNewIndex) {
  // Every order of the axes of a [2, 3, 4, 5] tensor, checked against the index formula
  // out[i0, i1, i2, i3] = x[j] with j's axis axes[k] at position i_k.
  const Shape in{2, 3, 4, 5};
  Tensor x = random_input(in, 36);
  const std::vector<double> xs = x.to_vector();
  std::vector<std::int64_t> axes{0, 1, 2, 3};
  do {
    const std::vector<double> ys = permute(x, axes).to_vector();
    std::int64_t at = 0;
    std::vector<std::int64_t> i(4);
    for (i[0] = 0; i[0] < in[axes[0]]; ++i[0])
      for (i[1] = 0; i[1] < in[axes[1]]; ++i[1])
        for (i[2] = 0; i[2] < in[axes[2]]; ++i[2])
          for (i[3] = 0; i[3] < in[axes[3]]; ++i[3]) {
            std::vector<std::int64_t> j(4);
            for (int k = 0; k < 4; ++k) j[axes[k]] = i[k];
            const std::int64_t from = ((j[0] * 3 + j[1]) * 4 + j[2]) * 5 + j[3];
            ASSERT_EQ(ys[at++], xs[from]) << "axes " << axes[0] << axes[1] << axes[2] << axes[3];
          }
  } while (std::next_permutation(axes.begin(), axes.end()));
}

TEST(OpGradcheck, Concat) {
  Tensor a = random_input({2, 3}, 23), b = random_input({2, 1}, 24), c = random_input({2, 2}, 25);
  EXPECT_GRADCHECK([](const Inputs& v) { return concat({v[0], v[1], v[2]}, 1); }, {a, b, c});
  EXPECT_GRADCHECK([](const Inputs& v) { return concat({v[0], v[0]}, 0); }, {a});
}

TEST(OpGradcheck, EmbeddingWithRepeatedIds) {
  Tensor table = random_input({5, 3}, 26);
  Indices ids{{4, 0, 4, 2, 2, 2}, {2, 3}};
  EXPECT_GRADCHECK([ids](const Inputs& v) { return embedding(v[0], ids); }, {table});
}

TEST(OpGradcheck, GatherAndScatterAddColumns) {
  // a column picked twice in a row and a column never picked; a batch of [2, 3] leading axes
  Indices index{{2, 0, 2, 1, 3, 3, 0, 1}, {2, 4}};
  Tensor x = random_input({2, 3, 2, 5}, 41), y = random_input({2, 3, 2, 4}, 42);
  EXPECT_GRADCHECK([index](const Inputs& v) { return gather_columns(v[0], index); }, {x});
  EXPECT_GRADCHECK([index](const Inputs& v) { return scatter_add_columns(v[0], index, 5); }, {y});
}

TEST(OpGradcheck, GatherAndScatterAddColumnsExactValues) {
  // rows i = 0, 1 of a [1, 2, 3] x: gather takes x[i, index[i, j]]; scatter adds y[i, j] into
  // column index[i, j]
  const Tensor x = from_vector({10, 11, 12, 20, 21, 22}, {1, 2, 3}, Dtype::f64);
  const Indices index{{2, 2, 0, 1, 0, 1}, {2, 3}};
  EXPECT_EQ(gather_columns(x, index).to_vector(), (std::vector<double>{12, 12, 10, 21, 20, 21}));
  const Tensor y = from_vector({1, 2, 4, 8, 16, 32}, {1, 2, 3}, Dtype::f64);
  EXPECT_EQ(scatter_add_columns(y, index, 4).to_vector(),
            (std::vector<double>{4, 0, 3, 0, 16, 40, 0, 0}));
  // each is the other's adjoint: <gather(a), b> = <a, scatter(b)> for any a, b
  const Tensor a = random_input({3, 2, 3}, 43), b = random_input({3, 2, 3}, 44);
  EXPECT_NEAR(sum(mul(gather_columns(a, index), b)).item(),
              sum(mul(a, scatter_add_columns(b, index, 3))).item(), 1e-12);
}

TEST(OpGradcheck, SoftmaxFusedAndComposite) {
  Tensor x = random_input({2, 3, 5}, 27);
  EXPECT_GRADCHECK([](const Inputs& v) { return softmax(v[0]); }, {x});
  EXPECT_GRADCHECK([](const Inputs& v) { return composite::softmax(v[0]); }, {x});
}

TEST(OpGradcheck, SoftmaxOverMaskedScores) {
  Tensor x = random_input({2, 4, 4}, 28);
  Tensor causal = from_vector({0, 1, 1, 1, 0, 0, 1, 1, 0, 0, 0, 1, 0, 0, 0, 0}, {4, 4}, Dtype::f64);
  EXPECT_GRADCHECK(
      [causal](const Inputs& v) {
        return softmax(masked_fill(v[0], causal, -std::numeric_limits<double>::infinity()));
      },
      {x});
}

TEST(OpGradcheck, LogSoftmaxAndCrossEntropy) {
  Tensor logits = random_input({4, 6}, 29);
  EXPECT_GRADCHECK([](const Inputs& v) { return log_softmax(v[0]); }, {logits});
  Indices targets{{1, -1, 5, 0}, {4}};  // one ignored row
  EXPECT_GRADCHECK([targets](const Inputs& v) { return cross_entropy(v[0], targets); }, {logits});
}

TEST(OpGradcheck, LinearWithBiasAndRelu) {
  // Weights drawn so that no pre-activation lies near ReLU's kink (checked below).
  Tensor x = random_input({2, 3, 5}, 50), w = random_input({5, 4}, 51), b = random_input({4}, 52);
  for (double z : composite::linear(x, w, b).to_vector()) ASSERT_GT(std::abs(z), 1e-3);
  EXPECT_GRADCHECK([](const Inputs& v) { return linear(v[0], v[1], v[2]); }, {x, w, b});
  EXPECT_GRADCHECK([](const Inputs& v) { return linear(v[0], v[1], v[2], Activation::relu); },
                   {x, w, b});
  EXPECT_GRADCHECK([](const Inputs& v) { return linear(v[0], v[1], Tensor(), Activation::relu); },
                   {x, w});
}

TEST(OpGradcheck, LayerNormFusedAndComposite) {
  Tensor x = random_input({3, 2, 6}, 30), gamma = random_input({6}, 31),
         beta = random_input({6}, 32);
  EXPECT_GRADCHECK([](const Inputs& v) { return layer_norm(v[0], v[1], v[2]); }, {x, gamma, beta});
  EXPECT_GRADCHECK([](const Inputs& v) { return composite::layer_norm(v[0], v[1], v[2]); },
                   {x, gamma, beta});
}

TEST(OpGradcheck, Gelu) {
  Tensor x = random_input({3, 4}, 33);
  EXPECT_GRADCHECK([](const Inputs& v) { return gelu(v[0]); }, {x});
}

// chapter: 09
TEST(OpGradcheck, AbsLog1pSigmoidSoftplus) {
  // abs away from its kink at 0; log1p on x > -1, with values near 0 where it beats log(1 + x)
  Tensor x = from_vector({-1.5, 0.7, -0.5, 2.0, 0.9, -2.2}, {2, 3}, Dtype::f64);
  Tensor small = from_vector({-0.9, -0.3, 1e-3, 0.5, 3.0, 40.0}, {2, 3}, Dtype::f64);
  EXPECT_GRADCHECK([](const Inputs& v) { return abs(v[0]); }, {x});
  EXPECT_GRADCHECK([](const Inputs& v) { return log1p(v[0]); }, {small});
  Tensor wide = random_input({3, 5}, 41, 4.0);
  EXPECT_GRADCHECK([](const Inputs& v) { return sigmoid(v[0]); }, {wide});
  EXPECT_GRADCHECK([](const Inputs& v) { return softplus(v[0]); }, {wide});
}

// chapter: 09
TEST(OpGradcheck, AbsLog1pSigmoidSoftplusValues) {
  const Tensor x = from_vector({-800, -2, -0.0, 0, 1e-12, 3, 800}, {7}, Dtype::f64);
  const std::vector<double> v = x.to_vector();
  const std::vector<double> a = abs(x).to_vector(), s = sigmoid(x).to_vector(),
                            p = softplus(x).to_vector();
  for (std::size_t i = 0; i < v.size(); ++i) {
    EXPECT_EQ(a[i], std::fabs(v[i]));
    EXPECT_GE(s[i], 0.0);
    EXPECT_LE(s[i], 1.0);
    EXPECT_GE(p[i], 0.0);
    EXPECT_TRUE(std::isfinite(p[i])) << "softplus(" << v[i] << ") overflowed";
  }
  EXPECT_EQ(s[0], 0.0);    // e^800 is +inf in double: 1 / inf
  EXPECT_EQ(s[6], 1.0);    // 1 / (1 + e^-800)
  EXPECT_EQ(p[6], 800.0);  // log(1 + e^800) = 800 + log1p(e^-800)
  EXPECT_DOUBLE_EQ(p[5], std::log(1 + std::exp(3.0)));
  EXPECT_DOUBLE_EQ(p[3], std::log(2.0));
  // log1p keeps the digits that log(1 + x) loses for a small x
  EXPECT_EQ(log1p(from_vector({1e-12}, {1}, Dtype::f64)).item(), std::log1p(1e-12));
  EXPECT_NE(std::log1p(1e-12), std::log(1 + 1e-12));
}

// chapter: 09
TEST(OpGradcheck, PowWithATensorExponent) {
  Tensor base = positive_input({3, 4}, 42), exponent = random_input({3, 4}, 43);
  EXPECT_GRADCHECK([](const Inputs& v) { return pow(v[0], v[1]); }, {base, exponent});
  // broadcasting both ways: distances [1, T, T] against one exponent per head [H, 1, 1]
  Tensor distances = positive_input({1, 3, 3}, 44), heads = positive_input({2, 1, 1}, 45);
  EXPECT_GRADCHECK([](const Inputs& v) { return pow(v[0], v[1]); }, {distances, heads});
  EXPECT_GRADCHECK([distances](const Inputs& v) { return pow(distances, v[0]); }, {heads});
}

// chapter: 09
TEST(OpGradcheck, PowWithATensorExponentAtAZeroBase) {
  // 0^e = 0 for e > 0, and its gradient with respect to e is 0 (the limit of b^e log b): a
  // constant base of distances with zeros on the diagonal gives finite gradients.
  const Tensor base = from_vector({0, 1, 2, 0}, {2, 2}, Dtype::f64);
  Tensor exponent = from_vector({1.5}, {1}, Dtype::f64);
  exponent.set_requires_grad();
  const Tensor y = pow(base, exponent);
  EXPECT_EQ(y.to_vector(), (std::vector<double>{0, 1, std::pow(2.0, 1.5), 0}));
  sum(y).backward();
  EXPECT_DOUBLE_EQ(exponent.grad().item(), std::pow(2.0, 1.5) * std::log(2.0));
  EXPECT_GRADCHECK([base](const Inputs& v) { return pow(base, v[0]); },
                   {from_vector({0.7, 1.9}, {2, 1}, Dtype::f64)});
  EXPECT_THROW(pow(base, from_vector({1, 2, 3}, {3}, Dtype::f64)), Error);  // [2, 2] and [3]
}

// chapter: 10
TEST(OpGradcheck, CumsumAlongEveryAxisBothWays) {
  Tensor x = random_input({3, 4, 5}, 60), line = random_input({6}, 61);
  for (std::int64_t axis : {0, 1, 2, -2})
    for (bool reverse : {false, true})
      EXPECT_GRADCHECK([=](const Inputs& v) { return cumsum(v[0], axis, reverse); }, {x});
  EXPECT_GRADCHECK([](const Inputs& v) { return cumsum(v[0], 0, true); }, {line});
  // CoPE's use: gates summed from each key up to the query, masked to the causal triangle
  Tensor gates = random_input({2, 3, 3}, 62);
  Tensor causal = from_vector({0, 1, 1, 0, 0, 1, 0, 0, 0}, {3, 3}, Dtype::f64);
  EXPECT_GRADCHECK(
      [causal](const Inputs& v) { return cumsum(masked_fill(sigmoid(v[0]), causal, 0), -1, true); },
      {gates});
}

// chapter: 10
TEST(OpGradcheck, CumsumValuesMatchAPlainLoop) {
  const Tensor x = from_vector({1, 2, 3, 4}, {4}, Dtype::f64);
  EXPECT_EQ(cumsum(x, 0).to_vector(), (std::vector<double>{1, 3, 6, 10}));
  EXPECT_EQ(cumsum(x, -1, true).to_vector(), (std::vector<double>{10, 9, 7, 4}));
  // every axis of a [2, 3, 4], both ways, in both dtypes, against sums of x.at() in a loop
  const Shape shape{2, 3, 4};
  const Tensor y = random_input(shape, 63);
  for (Dtype dtype : {Dtype::f64, Dtype::f32})
    for (std::int64_t axis = 0; axis < 3; ++axis)
      for (bool reverse : {false, true}) {
        const Tensor z = y.to(dtype), sums = cumsum(z, axis, reverse);
        for (std::int64_t i = 0; i < 2; ++i)
          for (std::int64_t j = 0; j < 3; ++j)
            for (std::int64_t k = 0; k < 4; ++k) {
              std::vector<std::int64_t> at{i, j, k};
              const std::int64_t here = at[axis];
              double expected = 0;
              for (at[axis] = 0; at[axis] < shape[axis]; ++at[axis])
                if (reverse ? at[axis] >= here : at[axis] <= here) expected += z.at(at);
              EXPECT_NEAR(sums.at({i, j, k}), expected, dtype == Dtype::f64 ? 1e-12 : 1e-5)
                  << "axis " << axis << (reverse ? " reverse" : "");
            }
      }
  // an input made by permute (a contiguous copy in its new order) sums along its own axes
  EXPECT_EQ(cumsum(permute(y, {2, 0, 1}), 0, true).to_vector(),
            permute(cumsum(y, 2, true), {2, 0, 1}).to_vector());
  EXPECT_EQ(cumsum(zeros({2, 0, 3}), 1).shape(), (Shape{2, 0, 3}));
}

// chapter: 10
TEST(OpGradcheck, LogSigmoid) {
  Tensor wide = random_input({3, 5}, 64, 4.0);
  EXPECT_GRADCHECK([](const Inputs& v) { return log_sigmoid(v[0]); }, {wide});
}

// chapter: 10
TEST(OpGradcheck, LogSigmoidStaysExactWhereTheNaiveFormGivesInfinity) {
  const std::vector<double> v{-1000, -30, 0, 30, 1000};
  Tensor x = from_vector(v, {5}, Dtype::f64);
  x.set_requires_grad();
  const Tensor y = log_sigmoid(x);
  sum(y).backward();
  const std::vector<double> ys = y.to_vector(), grads = x.grad().to_vector();
  for (std::size_t i = 0; i < v.size(); ++i) {
    EXPECT_DOUBLE_EQ(ys[i], std::min(v[i], 0.0) - std::log1p(std::exp(-std::fabs(v[i]))));
    EXPECT_DOUBLE_EQ(grads[i], 1 / (1 + std::exp(v[i])));  // sigmoid(-x)
  }
  EXPECT_EQ(ys[0], -1000.0);
  EXPECT_EQ(ys[4], 0.0);
  EXPECT_DOUBLE_EQ(ys[2], -std::log(2.0));
  EXPECT_EQ(grads[0], 1.0);
  EXPECT_EQ(grads[4], 0.0);
  // why the stable form: sigmoid(-1000) is 0 in double, and its log -inf
  EXPECT_EQ(log(sigmoid(x.detach())).to_vector()[0], -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isfinite(log_sigmoid(from_vector({-1000}, {1})).item()));  // float32 too
  // and the gradient as sigmoid(-x): 1 - sigmoid(40) is 1 - 1 in double, e^-40 is not 0
  Tensor forty = from_vector({40}, {1}, Dtype::f64);
  forty.set_requires_grad();
  log_sigmoid(forty).backward(ones({1}, Dtype::f64));
  EXPECT_EQ(1 - sigmoid(forty.detach()).item(), 0.0);
  EXPECT_DOUBLE_EQ(forty.grad().item(), std::exp(-40.0) / (1 + std::exp(-40.0)));
}

// chapter: 10
TEST(OpGradcheck, GatherInterpolated) {
  // P = 5 positions 0..4; the positions straddle both clamps (below 0, above 4) and keep
  // away from the integers, where the function has kinks
  Tensor table = random_input({2, 3, 5}, 65);
  Tensor positions = from_vector({-0.7, 0.3, 1.6, 3.9, 4.4, 2.5, 0.8, 3.2, 7.1, 1.1, 2.9, -2.4,
                                  0.5,  1.5, 2.5, 3.5, 3.7, 2.2, 1.4, 0.6, 4.8, 0.1, 2.6, 3.3},
                                 {2, 3, 4}, Dtype::f64);
  EXPECT_GRADCHECK([](const Inputs& v) { return gather_interpolated(v[0], v[1]); },
                   {table, positions});
  // CoPE's layout: a table [B, H, T, P] read at positions [B, H, T, T]; P = 1 reads one value
  Tensor logits = random_input({1, 2, 3, 4}, 66);
  Rng rng(67);
  Tensor keys = rand_uniform({1, 2, 3, 3}, rng, 0.05, 2.95, Dtype::f64);
  EXPECT_GRADCHECK([](const Inputs& v) { return gather_interpolated(v[0], v[1]); }, {logits, keys});
  EXPECT_GRADCHECK([](const Inputs& v) { return gather_interpolated(v[0], v[1]); },
                   {random_input({3, 1}, 68), from_vector({-0.5, 0.5, 1.5}, {3, 1}, Dtype::f64)});
}

// chapter: 10
TEST(OpGradcheck, GatherInterpolatedValuesAndTheGradientWhereClamped) {
  // table 10, 20, 40, 80 at 0..3: p = -1 and 3.7 are clamped to 0 and 3; 0 and 2 are integers
  Tensor table = from_vector({10, 20, 40, 80}, {1, 4}, Dtype::f64);
  Tensor positions = from_vector({-1, 0, 0.25, 1.5, 2, 3.7}, {1, 6}, Dtype::f64);
  table.set_requires_grad();
  positions.set_requires_grad();
  const Tensor out = gather_interpolated(table, positions);
  EXPECT_EQ(out.to_vector(), (std::vector<double>{10, 10, 12.5, 30, 40, 80}));
  sum(out).backward();
  // each slot adds 1 - w and w to the two columns it read: 1 + 1 + .75, .25 + .5, .5 + 1, 1
  EXPECT_EQ(table.grad().to_vector(), (std::vector<double>{2.75, 0.75, 1.5, 1}));
  // table[ceil] - table[floor] inside (0, 3); exactly 0 where clamped and at integers
  EXPECT_EQ(positions.grad().to_vector(), (std::vector<double>{0, 0, 10, 20, 0, 0}));
  // against a plain loop, in CoPE's layout [B, H, T, P] and [B, H, T, T], in float32
  Rng rng(69);
  const Tensor logits = rand_uniform({2, 2, 3, 6}, rng, -1, 1);
  const Tensor keys = rand_uniform({2, 2, 3, 3}, rng, -1, 7);
  const Tensor values = gather_interpolated(logits, keys);
  for (std::int64_t b = 0; b < 2; ++b)
    for (std::int64_t h = 0; h < 2; ++h)
      for (std::int64_t i = 0; i < 3; ++i)
        for (std::int64_t j = 0; j < 3; ++j) {
          const double p = std::clamp(keys.at({b, h, i, j}), 0.0, 5.0), w = p - std::floor(p);
          const double expected = (1 - w) * logits.at({b, h, i, std::int64_t(std::floor(p))}) +
                                  w * logits.at({b, h, i, std::int64_t(std::ceil(p))});
          EXPECT_NEAR(values.at({b, h, i, j}), expected, 1e-6);
        }
}

// chapter: 10
TEST(OpGradcheck, GatherInterpolatedNeedsNoTensorPerPair) {
  // forward and backward at T = P = 64 take four [T, T] tensors (the output, the incoming
  // gradient, one gradient per input); a one-hot [T, T, P] of the positions would be 64
  Rng rng(70);
  Tensor table = rand_uniform({1, 1, 64, 64}, rng, -1, 1, Dtype::f64).set_requires_grad();
  Tensor positions = rand_uniform({1, 1, 64, 64}, rng, 0, 63, Dtype::f64).set_requires_grad();
  const std::int64_t one = 64 * 64 * 8, start = tensor_bytes().live;
  reset_peak_tensor_bytes();
  sum(gather_interpolated(table, positions)).backward();
  EXPECT_LE(tensor_bytes().peak - start, 8 * one);
}

// The check must be able to fail: an op whose backward rule is off by a factor of two.
TEST(OpGradcheck, CatchesAWrongBackwardRuleAndNamesTheElement) {
  auto broken_square = [](const Tensor& x) {
    Tensor out;
    {
      NoGradGuard guard;
      out = mul(x, x);
    }
    Tensor x0 = x.detach();
    return record("broken_square", out, {x}, [x0](const Tensor& g) -> std::vector<Tensor> {
      return {mul(g, x0)};  // should be 2 x g
    });
  };
  Tensor x = random_input({2, 3}, 34).set_name("x");
  const auto result = gradcheck([&](const Inputs& v) { return broken_square(v[0]); }, {x});
  EXPECT_FALSE(result.passed);
  EXPECT_NE(result.report.find("'x'"), std::string::npos) << result.report;
  EXPECT_NE(result.report.find("element [0, 0]"), std::string::npos) << result.report;
  EXPECT_NE(result.report.find("analytic"), std::string::npos) << result.report;
}

TEST(OpGradcheck, RejectsFloat32Inputs) {
  Tensor x = ones({2});
  EXPECT_THROW(gradcheck([](const Inputs& v) { return v[0]; }, {x}), Error);
}
