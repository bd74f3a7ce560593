// The op profiler: which rows a known graph leaves, and how often (times are not checked).
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>

#include "ag/functional.hpp"
#include "ag/ops.hpp"
#include "ag/profile.hpp"
#include "ag/tensor_bytes.hpp"

using namespace ag;

namespace {
std::map<std::pair<std::string, profile::Phase>, std::int64_t> calls_by_row(
    const profile::Report& report) {
  std::map<std::pair<std::string, profile::Phase>, std::int64_t> calls;
  for (const auto& row : report.rows) calls[{row.op, row.phase}] = row.calls;
  return calls;
}
}  // namespace

TEST(Profile, CountsEachOpOfAKnownGraphForwardAndBackward) {
  Tensor x = from_vector({1, -2, 3, 4, 5, -6}, {2, 3}, Dtype::f64).set_requires_grad();
  Tensor w = from_vector({0.5, -1, 2, 1, 0.25, -3}, {3, 2}, Dtype::f64).set_requires_grad();
  profile::start();
  Tensor h = matmul(x, w);              // [2, 2]
  Tensor loss = mean(relu(add(h, h)));  // h fans out into add's two inputs
  loss.backward();
  const profile::Report report = profile::stop();
  using P = profile::Phase;
  const std::map<std::pair<std::string, P>, std::int64_t> expected{
      {{"matmul", P::forward}, 1},
      {{"add", P::forward}, 1},
      {{"relu", P::forward}, 1},
      {{"mean", P::forward}, 1},  // its inner ops are its own
      // mean is sum then mul on the tape, so backward runs those two rules
      {{"mul", P::backward}, 1},
      {{"sum", P::backward}, 1},
      {{"relu", P::backward}, 1},
      {{"add", P::backward}, 1},
      {{"matmul", P::backward}, 1},
      // once per gradient sent: to mul's, sum's, relu's and add's outputs, twice to h (add
      // sends one to each of its inputs), to x and to w
      {{"accumulate gradients", P::backward}, 7},
  };
  EXPECT_EQ(calls_by_row(report), expected);
  EXPECT_GE(report.wall_ms, 0.0);
}

TEST(Profile, TableNamesTheOpsAndTheShareOfMatrixProducts) {
  Tensor a = from_vector({1, 2, 3, 4}, {2, 2}, Dtype::f64).set_requires_grad();
  profile::start();
  sum(matmul_transposed(a, a)).backward();
  const std::string table = profile::format(profile::stop(), 1);
  EXPECT_NE(table.find("matmul_transposed"), std::string::npos) << table;
  EXPECT_NE(table.find("matrix products"), std::string::npos) << table;
  EXPECT_TRUE(profile::is_gemm("matmul") && profile::is_gemm("transpose_matmul"));
  EXPECT_FALSE(profile::is_gemm("add"));
}

TEST(TensorBytes, CountsEachBufferOnceWhileItLivesAndKeepsThePeak) {
  const ag::TensorBytes start = ag::tensor_bytes();
  ag::reset_peak_tensor_bytes();
  {
    const ag::Tensor a = ag::zeros({100, 10}, ag::Dtype::f32);  // 4000 bytes
    const ag::Tensor view = ag::reshape(a, {1000});             // the same buffer
    EXPECT_EQ(ag::tensor_bytes().live - start.live, 4000);
    const ag::Tensor b = ag::zeros({100}, ag::Dtype::f64);  // 800 bytes
    EXPECT_EQ(ag::tensor_bytes().live - start.live, 4800);
  }
  EXPECT_EQ(ag::tensor_bytes().live, start.live);         // both freed
  EXPECT_EQ(ag::tensor_bytes().peak - start.live, 4800);  // the most at once
  ag::reset_peak_tensor_bytes();
  EXPECT_EQ(ag::tensor_bytes().peak, start.live);
}

TEST(Profile, CountsEachMatrixProductByKindWithItsFlops) {
  // A Linear layer, x [5, 3] W [3, 4] + b, forward and backward: one product of each kind.
  Tensor x = full({5, 3}, 0.5, Dtype::f32).set_requires_grad();
  Tensor w = full({3, 4}, 0.25, Dtype::f32).set_requires_grad();
  Tensor b = zeros({4}, Dtype::f32).set_requires_grad();
  // attention-like: a batch of 2 products [6, 7] x [7, 8]^T, not counted by the first stop()
  Tensor q = full({2, 6, 7}, 1.0, Dtype::f64), k = full({2, 8, 7}, 2.0, Dtype::f64);
  profile::start();
  sum(linear(x, w, b, Activation::relu)).backward();
  const profile::Report report = profile::stop();
  using K = profile::ProductKind;
  ASSERT_EQ(report.products.size(), 3u);
  EXPECT_EQ(report.products[0].kind, K::xW);    // forward x W: [5, 3] x [3, 4]
  EXPECT_EQ(report.products[1].kind, K::dYWt);  // dx = dz W^T: [5, 4] x [4, 3]
  EXPECT_EQ(report.products[2].kind, K::XtdY);  // dW = x^T dz: [3, 5] x [5, 4]
  for (const profile::ProductTotals& p : report.products) {
    EXPECT_EQ(p.calls, 1) << profile::product_key(p.kind);
    EXPECT_EQ(p.flops, 2.0 * 5 * 3 * 4) << profile::product_key(p.kind);
    EXPECT_GE(p.ns, 0);
  }
  EXPECT_STREQ(profile::product_key(K::dYWt), "dYWt");
  EXPECT_STREQ(profile::product_name(K::XtdY), "X^T dY");

  profile::start();  // counts from zero again
  matmul_transposed(q, k);
  EXPECT_EQ(profile::product_totals().size(), 1u);
  const profile::Report batched = profile::stop();
  ASSERT_EQ(batched.products.size(), 1u);
  EXPECT_EQ(batched.products[0].kind, K::dYWt);
  EXPECT_EQ(batched.products[0].calls, 1);  // one batched kernel call
  EXPECT_EQ(batched.products[0].flops, 2.0 * 2 * 6 * 8 * 7);
  matmul_transposed(q, k);  // profiling off: not counted
  ASSERT_EQ(profile::product_totals().size(), 1u);
  EXPECT_EQ(profile::product_totals()[0].calls, 1);
}
