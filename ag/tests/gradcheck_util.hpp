// Shared helpers for the gradient-check tests.
#pragma once
#include <gtest/gtest.h>

#include "ag/gradcheck.hpp"
#include "ag/random.hpp"

// Fails the test with gradcheck's own report (input, element, both values).
#define EXPECT_GRADCHECK(f, ...)                                    \
  do {                                                              \
    const auto gc_result = ::ag::gradcheck((f), __VA_ARGS__);       \
    EXPECT_TRUE(gc_result.passed) << gc_result.report;              \
    EXPECT_GT(gc_result.checks, 0) << "gradcheck compared nothing"; \
  } while (0)

// A float64 leaf of the given shape with N(0, 1) values from a fixed seed.
inline ag::Tensor random_input(const ag::Shape& shape, std::uint64_t seed, double scale = 1.0) {
  ag::Rng rng(seed);
  return ag::randn(shape, rng, ag::Dtype::f64, scale);
}

// Values kept away from 0 (for log, div, sqrt, and ReLU's kink).
inline ag::Tensor positive_input(const ag::Shape& shape, std::uint64_t seed) {
  ag::Rng rng(seed);
  return ag::rand_uniform(shape, rng, 0.5, 2.0, ag::Dtype::f64);
}
