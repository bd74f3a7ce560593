// The tape and the backward sweep: fan-in, repeated backward, accumulation, deep graphs.
#include <gtest/gtest.h>
#include <pthread.h>

#include <exception>
#include <functional>

#include "ag/ops.hpp"
#include "ag/tape.hpp"

using namespace ag;

// grades: task 0.1
TEST(Engine, FanOutReuseSumsGradients) {
  // b = a + a; c = b * b  =>  c = 4 a^2, dc/da = 8a
  Tensor a = from_vector({1.5, -2.0}, {2}, Dtype::f64).set_requires_grad();
  Tensor b = add(a, a);
  Tensor c = sum(mul(b, b));
  c.backward();
  EXPECT_DOUBLE_EQ(a.grad().at({0}), 12.0);
  EXPECT_DOUBLE_EQ(a.grad().at({1}), -16.0);
}

TEST(Engine, BackwardTwiceAccumulatesIntoLeavesOnly) {
  Tensor a = from_vector({3.0}, {1}, Dtype::f64).set_requires_grad();
  Tensor b = mul(a, a);          // an intermediate with a gradient of its own
  Tensor loss = sum(mul(b, a));  // a^3
  loss.backward();
  EXPECT_DOUBLE_EQ(a.grad().item(), 27.0);
  loss.backward();  // same graph again: the leaf adds another 27, nothing else leaks
  EXPECT_DOUBLE_EQ(a.grad().item(), 54.0);
  EXPECT_FALSE(b.grad().defined()) << "only leaves keep gradients";
}

TEST(Engine, ZeroGradClearsAccumulation) {
  Tensor a = from_vector({2.0}, {1}, Dtype::f64).set_requires_grad();
  sum(mul(a, a)).backward();
  a.zero_grad();
  EXPECT_FALSE(a.grad().defined());
  sum(mul(a, 3.0)).backward();
  EXPECT_DOUBLE_EQ(a.grad().item(), 3.0);
}

TEST(Engine, NoGradGuardRecordsNothing) {
  Tensor a = ones({2}, Dtype::f64).set_requires_grad();
  Tensor b;
  {
    NoGradGuard guard;
    EXPECT_FALSE(grad_enabled());
    b = mul(a, a);
  }
  EXPECT_TRUE(grad_enabled());
  EXPECT_FALSE(b.requires_grad());
  EXPECT_EQ(b.op_name(), "leaf");
  EXPECT_THROW(sum(b).backward(), Error);
}

TEST(Engine, DetachStopsTheGradient) {
  Tensor a = from_vector({2.0}, {1}, Dtype::f64).set_requires_grad();
  Tensor loss = sum(mul(a, a.detach()));  // d/da (a * const) = const
  loss.backward();
  EXPECT_DOUBLE_EQ(a.grad().item(), 2.0);
}

// grades: task 0.1
TEST(Engine, TopologicalOrderPutsConsumersFirst) {
  Tensor a = ones({1}).set_requires_grad();
  Tensor b = exp(a);
  Tensor c = add(b, b);
  Tensor d = mul(c, b);
  auto order = topological_order(d);
  ASSERT_EQ(order.size(), 3u);
  EXPECT_EQ(order[0]->op, "mul");
  EXPECT_EQ(order[1]->op, "add");
  EXPECT_EQ(order[2]->op, "exp");
}

namespace {

// Runs f on a thread with a 256 KiB stack (a main thread has 8 MiB on Linux): a recursion
// 100000 calls deep overflows it, however small its frames, and the test crashes. An
// exception thrown by f is thrown again here, so that the test reports it.
void on_a_small_stack(const std::function<void()>& f) {
  struct Call {
    const std::function<void()>* f;
    std::exception_ptr error;
  } call{&f, nullptr};
  pthread_attr_t attributes;
  ASSERT_EQ(pthread_attr_init(&attributes), 0);
  ASSERT_EQ(pthread_attr_setstacksize(&attributes, 256 * 1024), 0);
  pthread_t thread;
  const int started = pthread_create(
      &thread, &attributes,
      [](void* p) -> void* {
        auto* c = static_cast<Call*>(p);
        try {
          (*c->f)();
        } catch (...) {
          c->error = std::current_exception();
        }
        return nullptr;
      },
      &call);
  pthread_attr_destroy(&attributes);
  ASSERT_EQ(started, 0);
  pthread_join(thread, nullptr);
  if (call.error) std::rethrow_exception(call.error);
}

}  // namespace

// grades: task 0.1
TEST(Engine, DeepChainOfOneHundredThousandOpsNeedsNoRecursion) {
  // A recursive topological sort or a recursive graph release would overflow the small stack
  // of this thread (a crash). The steps have x's own shape: the chain needs no broadcasting,
  // only the topological order.
  on_a_small_stack([] {
    Tensor x = from_vector({1.0}, {1}, Dtype::f64).set_requires_grad();
    const Tensor step = from_vector({1e-5}, {1}, Dtype::f64);
    Tensor y = x;
    for (int i = 0; i < 100000; ++i) y = add(y, step);
    Tensor loss = sum(y);
    loss.backward();
    EXPECT_DOUBLE_EQ(x.grad().item(), 1.0);
    EXPECT_NEAR(loss.item(), 2.0, 1e-9);
    y = Tensor();
    loss = Tensor();  // releases the whole chain, iteratively
  });
}

TEST(Engine, NonScalarBackwardNeedsASeed) {
  Tensor a = ones({2, 3}).set_requires_grad();
  Tensor b = mul(a, 2.0);
  try {
    b.backward();
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("[2, 3]"), std::string::npos) << e.what();
  }
  EXPECT_THROW(b.backward(ones({3, 2})), Error);
  b.backward(full({2, 3}, 0.5));
  EXPECT_DOUBLE_EQ(a.grad().at({1, 2}), 1.0);
}

TEST(Engine, BackwardOnConstantIsAnError) { EXPECT_THROW(sum(ones({2})).backward(), Error); }

TEST(Engine, GradientsOfLeavesNotRequiringThemStayEmpty) {
  Tensor a = ones({2}, Dtype::f64).set_requires_grad();
  Tensor c = ones({2}, Dtype::f64);
  sum(mul(a, c)).backward();
  EXPECT_TRUE(a.grad().defined());
  EXPECT_FALSE(c.grad().defined());
}
