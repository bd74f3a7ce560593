// The kernel tests' main: the tests run on whichever SIMD path is chosen (PE_SIMD forces
// one). A path this CPU cannot run is a skip (exit code 77), not a failure.
#include <gtest/gtest.h>

#include <cstdio>
#include <exception>

#include "ag/kernels/dispatch.hpp"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  try {
    // stderr: gtest_discover_tests parses stdout.
    std::fprintf(stderr, "kernel_tests: SIMD path %s\n", ag::kernels::simd_path_name());
  } catch (const ag::kernels::SimdPathUnavailable& e) {
    std::fprintf(stderr, "kernel_tests: skipped: %s\n", e.what());
    return 77;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kernel_tests: %s\n", e.what());
    return 1;
  }
  return RUN_ALL_TESTS();
}
