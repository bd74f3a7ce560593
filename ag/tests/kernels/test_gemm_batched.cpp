// gemm_batched: the batch, the threads and the epilogue (bias, ReLU) around the gemm.
// - its epilogue gives the same bits as the product followed by a separate addition and ReLU
//   (what the unfused ops compute);
// - it agrees with its scalar twin within the error bound of the sums;
// - its results are the same bits at 1, 2 and 3 threads.
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "ag/kernels/gemm.hpp"
#include "ag/threads.hpp"

namespace {

/// The operands of one BatchedGemm case, filled from a seeded generator.
template <class T>
struct BatchCase {
  bool trans_a, trans_b;
  std::size_t batch, M, N, K;
  bool shared_b, bias, relu;
  std::vector<T> a, b, bias_values;

  BatchCase(bool ta, bool tb, std::size_t batch_, std::size_t M_, std::size_t N_, std::size_t K_,
            bool shared_b_, bool bias_, bool relu_)
      : trans_a(ta),
        trans_b(tb),
        batch(batch_),
        M(M_),
        N(N_),
        K(K_),
        shared_b(shared_b_),
        bias(bias_),
        relu(relu_) {
    std::mt19937 rng(static_cast<unsigned>(M * 31 + N * 7 + K + batch));
    std::uniform_real_distribution<T> dist(T(-1), T(1));
    a.resize(std::max<std::size_t>(batch * M * K, 1));
    b.resize(std::max<std::size_t>((shared_b ? 1 : batch) * K * N, 1));
    bias_values.resize(std::max<std::size_t>(N, 1));
    for (T& x : a) x = dist(rng);
    for (T& x : b) x = dist(rng);
    for (T& x : bias_values) x = dist(rng);
  }

  std::string describe() const {
    return "trans_a=" + std::to_string(trans_a) + " trans_b=" + std::to_string(trans_b) +
           " batch=" + std::to_string(batch) + " M=" + std::to_string(M) +
           " N=" + std::to_string(N) + " K=" + std::to_string(K) +
           " shared_b=" + std::to_string(shared_b) + " bias=" + std::to_string(bias) +
           " relu=" + std::to_string(relu);
  }

  ag::kernels::BatchedGemm<T> arguments(T* c) const {
    ag::kernels::BatchedGemm<T> p;
    p.trans_a = trans_a;
    p.trans_b = trans_b;
    p.batch = batch;
    p.M = M;
    p.N = N;
    p.K = K;
    p.A = a.data();
    p.lda = trans_a ? M : K;
    p.stride_a = M * K;
    p.B = b.data();
    p.ldb = trans_b ? K : N;
    p.stride_b = shared_b ? 0 : K * N;
    p.C = c;
    p.ldc = N;
    p.stride_c = M * N;
    p.bias = bias ? bias_values.data() : nullptr;
    p.relu = relu;
    return p;
  }

  /// C from gemm_batched (or its scalar twin), starting from NaN everywhere.
  std::vector<T> run(bool scalar) const {
    std::vector<T> c(std::max<std::size_t>(batch * M * N, 1), std::numeric_limits<T>::quiet_NaN());
    if (scalar)
      ag::kernels::scalar::gemm_batched(arguments(c.data()));
    else
      ag::kernels::gemm_batched(arguments(c.data()));
    return c;
  }

  /// What the unfused ops compute: gemm per product, then C + bias, then ReLU, each a pass.
  std::vector<T> unfused() const {
    std::vector<T> c(std::max<std::size_t>(batch * M * N, 1));
    for (std::size_t i = 0; i < batch; ++i) {
      T* out = c.data() + i * M * N;
      ag::kernels::gemm<T>(trans_a, trans_b, M, N, K, T(1), a.data() + i * M * K, trans_a ? M : K,
                           b.data() + (shared_b ? 0 : i * K * N), trans_b ? K : N, T(0), out, N);
      for (std::size_t e = 0; e < M * N; ++e) {
        if (bias) out[e] = out[e] + bias_values[e % N];
        if (relu) out[e] = out[e] < T(0) ? T(0) : out[e];
      }
    }
    return c;
  }
};

template <class T>
std::vector<BatchCase<T>> cases() {
  std::vector<BatchCase<T>> all;
  for (bool ta : {false, true})
    for (bool tb : {false, true})
      for (bool bias : {false, true})
        for (bool relu : {false, true}) {
          // one large product, split by rows between threads, over several K slices
          all.emplace_back(ta, tb, 1, 301, 77, 900, true, bias, relu);
          // as wide as the narrow tile and narrower (a model's head of 26 letters)
          all.emplace_back(ta, tb, 1, 200, 26, 420, true, bias, relu);
          // a batch of small products, each with its own B, and one with a shared B
          all.emplace_back(ta, tb, 7, 32, 32, 40, false, bias, relu);
          all.emplace_back(ta, tb, 5, 13, 70, 33, true, bias, relu);
          // nothing to sum: C is the bias (or zero), ReLU'd
          all.emplace_back(ta, tb, 2, 5, 9, 0, false, bias, relu);
        }
  return all;
}

template <class T>
class GemmBatched : public ::testing::Test {};
using ElementTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(GemmBatched, ElementTypes);

TYPED_TEST(GemmBatched, EpilogueGivesTheBitsOfSeparatePasses) {
  for (const auto& c : cases<TypeParam>()) {
    SCOPED_TRACE(c.describe());
    EXPECT_EQ(c.run(false), c.unfused());
  }
}

TYPED_TEST(GemmBatched, MatchesScalarTwin) {
  using T = TypeParam;
  for (const auto& c : cases<T>()) {
    SCOPED_TRACE(c.describe());
    const std::vector<T> fast = c.run(false), reference = c.run(true);
    // Each element is a length-K sum (|terms| <= 1) plus a bias: the two summation orders
    // differ by at most 2 (K + 2) eps times the sum of magnitudes, bounded here by K + 1.
    const T bound = T(2) * T(c.K + 2) * std::numeric_limits<T>::epsilon() * T(c.K + 1);
    for (std::size_t e = 0; e < fast.size(); ++e)
      ASSERT_LE(std::abs(fast[e] - reference[e]), bound) << "element " << e;
  }
}

TYPED_TEST(GemmBatched, SameBitsAtAnyThreadCount) {
  const int threads_before = ag::max_threads();
  for (const auto& c : cases<TypeParam>()) {
    SCOPED_TRACE(c.describe());
    ag::set_max_threads(1);
    const auto one = c.run(false);
    for (int threads : {2, 3}) {
      ag::set_max_threads(threads);
      EXPECT_EQ(c.run(false), one) << threads << " threads";
    }
  }
  ag::set_max_threads(threads_before);
}

}  // namespace
