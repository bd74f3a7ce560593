// A step as micro-batches (ag/micro_batches.hpp), on every SIMD path (this suite runs once per
// path, and under an emulated CPU without AVX2):
// - the rule that fixes the number of micro-batches, and their rows;
// - the result (loss and every gradient) is the same bits at 1, 2 and 3 threads, with several
//   micro-batches (threads over micro-batches) and with one (threads inside each op);
// - in float64 it is the full batch's gradient, up to rounding;
// - an error in one micro-batch is rethrown and changes no gradient.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

#include "ag/functional.hpp"
#include "ag/micro_batches.hpp"
#include "ag/ops.hpp"
#include "ag/random.hpp"
#include "ag/threads.hpp"

namespace {

TEST(MicroBatches, CountDependsOnTheBatchShapeAlone) {
  EXPECT_EQ(ag::micro_batch_count(64, 32), 4);   // the reference step
  EXPECT_EQ(ag::micro_batch_count(16, 32), 2);   // 512 tokens: two of 256
  EXPECT_EQ(ag::micro_batch_count(8, 16), 1);    // 128 tokens: too few to cut
  EXPECT_EQ(ag::micro_batch_count(1, 4096), 1);  // one long sequence: split each op instead
  EXPECT_EQ(ag::micro_batch_count(3, 1000), 3);  // never more than one per sequence
  EXPECT_EQ(ag::micro_batch_count(1000, 1000), ag::kMaxMicroBatches);
  EXPECT_THROW(ag::micro_batch_count(0, 32), ag::Error);
  EXPECT_THROW(ag::micro_batch_count(4, 0), ag::Error);
}

TEST(MicroBatches, RowsCoverTheBatchOnceAndEvenly) {
  for (std::int64_t sequences : {1, 4, 7, 64, 65}) {
    for (std::int64_t count = 1; count <= std::min<std::int64_t>(sequences, 4); ++count) {
      std::int64_t next = 0;
      for (std::int64_t i = 0; i < count; ++i) {
        const ag::MicroBatchRows rows = ag::micro_batch_rows(sequences, count, i);
        EXPECT_EQ(rows.first, next);
        const std::int64_t size = rows.end - rows.first;
        EXPECT_TRUE(size == sequences / count || size == sequences / count + 1) << size;
        next = rows.end;
      }
      EXPECT_EQ(next, sequences);
    }
  }
  EXPECT_THROW(ag::micro_batch_rows(4, 5, 0), ag::Error);
  EXPECT_THROW(ag::micro_batch_rows(4, 2, 2), ag::Error);
}

TEST(MicroBatches, RowsOfABatchKeepTheirTrailingAxes) {
  const ag::Indices batch{{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, {3, 2, 2}};
  const ag::Indices middle = ag::rows_of(batch, {1, 2});
  EXPECT_EQ(middle.values, (std::vector<std::int64_t>{4, 5, 6, 7}));
  EXPECT_EQ(middle.shape, (ag::Shape{1, 2, 2}));
  EXPECT_EQ(ag::rows_of(batch, {0, 3}).values, batch.values);
  EXPECT_TRUE(ag::rows_of(batch, {2, 2}).values.empty());
  EXPECT_THROW(ag::rows_of(batch, {2, 4}), ag::Error);
  EXPECT_THROW(ag::rows_of(batch, {2, 1}), ag::Error);
  EXPECT_THROW(ag::rows_of(ag::Indices{{}, {}}, {0, 0}), ag::Error);
}

// A small network with the step's kinds of op: linear with ReLU, layer norm, a batched
// attention product pair with softmax, an embedding-free input, cross-entropy. Sized so that
// every op's own threading would take its parallel path on a whole batch (1024 rows x 64).
struct Network {
  static constexpr std::int64_t B = 32, T = 32, C = 64, F = 256, V = 16;
  ag::Tensor w1, b1, w2, gamma, beta, head;
  ag::Tensor x;  // [B, T, C], not a parameter
  ag::Indices targets;

  explicit Network(ag::Dtype dtype) {
    ag::Rng rng(7);
    const auto param = [&](ag::Shape shape, double stddev) {
      ag::Tensor t = ag::randn(shape, rng, dtype, stddev);
      t.set_requires_grad();
      return t;
    };
    w1 = param({C, F}, 0.1);
    b1 = param({F}, 0.1);
    w2 = param({F, C}, 0.1);
    gamma = param({C}, 1.0);
    beta = param({C}, 0.1);
    head = param({C, V}, 0.1);
    x = ag::randn({B, T, C}, rng, dtype);
    targets.shape = {B * T};
    for (std::int64_t i = 0; i < B * T; ++i)
      targets.values.push_back(i % 5 == 0 ? -1 : std::int64_t(rng.uniform() * V));
  }
  std::vector<ag::Tensor> parameters() const { return {w1, b1, w2, gamma, beta, head}; }

  // The mean cross-entropy of sequences [first, end).
  ag::Tensor loss(std::int64_t first, std::int64_t end) const {
    const std::int64_t rows = end - first;
    ag::Tensor h = ag::slice(x, 0, first, end);  // [rows, T, C]
    ag::Tensor n = ag::layer_norm(h, gamma, beta);
    ag::Tensor scores = ag::matmul_transposed(n, n);  // [rows, T, T]
    ag::Tensor mixed = ag::matmul(ag::softmax(scores), n);
    ag::Tensor f = ag::linear(ag::linear(mixed, w1, b1, ag::Activation::relu), w2, ag::Tensor());
    ag::Tensor logits = ag::matmul(ag::add(h, f), head);  // [rows, T, V]
    ag::Indices mine{{targets.values.begin() + first * T, targets.values.begin() + end * T},
                     {rows * T}};
    return ag::cross_entropy(ag::reshape(logits, {rows * T, V}), mine, -1);
  }

  std::int64_t scored(std::int64_t first, std::int64_t end) const {
    std::int64_t n = 0;
    for (std::int64_t i = first * T; i < end * T; ++i) n += targets.values[i] != -1;
    return n;
  }
};

struct Outcome {
  double loss;
  std::vector<std::vector<double>> gradients;
};

Outcome run(const Network& net, std::int64_t pieces, int threads) {
  const int before = ag::max_threads();
  ag::set_max_threads(threads);
  for (ag::Tensor p : net.parameters()) p.zero_grad();
  const double all = double(net.scored(0, Network::B));
  const double loss = ag::accumulate_micro_batches(pieces, [&](std::int64_t i) {
    const ag::MicroBatchRows rows = ag::micro_batch_rows(Network::B, pieces, i);
    return ag::WeightedLoss{net.loss(rows.first, rows.end),
                            double(net.scored(rows.first, rows.end)) / all};
  });
  ag::set_max_threads(before);
  Outcome out{loss, {}};
  for (const ag::Tensor& p : net.parameters()) out.gradients.push_back(p.grad().to_vector());
  return out;
}

TEST(MicroBatches, SameBitsAtOneTwoAndThreeThreads) {
  const Network net(ag::Dtype::f32);
  for (std::int64_t pieces : {std::int64_t(1), std::int64_t(3), ag::kMaxMicroBatches}) {
    const Outcome one = run(net, pieces, 1);
    for (int threads : {2, 3}) {
      const Outcome other = run(net, pieces, threads);
      EXPECT_EQ(one.loss, other.loss) << pieces << " micro-batches, " << threads << " threads";
      for (std::size_t p = 0; p < one.gradients.size(); ++p)
        EXPECT_EQ(one.gradients[p], other.gradients[p])
            << "parameter " << p << ", " << pieces << " micro-batches, " << threads << " threads";
    }
  }
}

TEST(MicroBatches, EqualTheWholeBatchUpToRounding) {
  const Network net(ag::Dtype::f64);
  for (ag::Tensor p : net.parameters()) p.zero_grad();
  ag::Tensor whole = net.loss(0, Network::B);
  whole.backward();
  std::vector<std::vector<double>> expected;
  for (const ag::Tensor& p : net.parameters()) expected.push_back(p.grad().to_vector());
  const Outcome pieces = run(net, 4, 2);
  EXPECT_NEAR(pieces.loss, whole.item(), 1e-12 * std::abs(whole.item()));
  for (std::size_t p = 0; p < expected.size(); ++p) {
    ASSERT_EQ(expected[p].size(), pieces.gradients[p].size());
    double scale = 0, worst = 0;
    for (std::size_t i = 0; i < expected[p].size(); ++i) {
      scale = std::max(scale, std::abs(expected[p][i]));
      worst = std::max(worst, std::abs(expected[p][i] - pieces.gradients[p][i]));
    }
    EXPECT_LE(worst, 1e-12 * scale) << "parameter " << p;
    EXPECT_GT(scale, 0) << "parameter " << p << " got no gradient";
  }
}

TEST(MicroBatches, AddToAGradientAlreadyThere) {
  const Network net(ag::Dtype::f64);
  const Outcome once = run(net, 2, 1);
  // Without zero_grad in between: a second call adds the same again.
  const double all = double(net.scored(0, Network::B));
  ag::accumulate_micro_batches(2, [&](std::int64_t i) {
    const ag::MicroBatchRows rows = ag::micro_batch_rows(Network::B, 2, i);
    return ag::WeightedLoss{net.loss(rows.first, rows.end),
                            double(net.scored(rows.first, rows.end)) / all};
  });
  const std::vector<double> twice = net.w1.grad().to_vector();
  for (std::size_t i = 0; i < twice.size(); ++i) ASSERT_EQ(twice[i], 2 * once.gradients[0][i]) << i;
}

TEST(MicroBatches, AnErrorInOneIsRethrownAndChangesNoGradient) {
  const Network net(ag::Dtype::f32);
  const Outcome before = run(net, 4, 1);
  for (int threads : {1, 2}) {
    ag::set_max_threads(threads);
    EXPECT_THROW(ag::accumulate_micro_batches(4,
                                              [&](std::int64_t i) {
                                                if (i == 2) throw std::runtime_error("piece 2");
                                                return ag::WeightedLoss{net.loss(i, i + 1), 0.25};
                                              }),
                 std::runtime_error);
    ag::set_max_threads(1);
    EXPECT_EQ(net.w1.grad().to_vector(), before.gradients[0]) << threads << " threads";
  }
  EXPECT_THROW(ag::accumulate_micro_batches(0, [&](std::int64_t) { return ag::WeightedLoss{}; }),
               ag::Error);
  EXPECT_THROW(ag::accumulate_micro_batches(1,
                                            [&](std::int64_t) {
                                              return ag::WeightedLoss{net.x.detach(), 1.0};
                                            }),
               ag::Error);  // not one number
}

TEST(MicroBatches, ACaptureKeepsGradientsOutOfTheLeaves) {
  ag::Tensor w = ag::full({3}, 2.0, ag::Dtype::f64);
  w.set_requires_grad();
  ag::GradientCapture capture;
  {
    ag::CaptureGradients scope(capture);
    EXPECT_EQ(ag::current_gradient_capture(), &capture);
    ag::sum(ag::mul(w, w)).backward();  // d/dw = 2w = 4
    ag::sum(w).backward();              // + 1
  }
  EXPECT_EQ(ag::current_gradient_capture(), nullptr);
  EXPECT_FALSE(w.grad().defined());
  ASSERT_EQ(capture.entries().size(), 1u);
  EXPECT_EQ(capture.entries()[0].gradient.to_vector(), (std::vector<double>{5, 5, 5}));
  ag::add_captured_gradients({capture});
  EXPECT_EQ(w.grad().to_vector(), (std::vector<double>{5, 5, 5}));
}

}  // namespace
