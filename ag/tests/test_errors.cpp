// Bad input gets an ag::Error whose text names the op and the shapes, never a crash.
#include <gtest/gtest.h>

#include <cmath>

#include "ag/functional.hpp"
#include "ag/nn.hpp"

using namespace ag;

namespace {
// Runs f, expects ag::Error, and checks that every fragment appears in its message.
template <class F>
void expect_error(F f, std::initializer_list<const char*> fragments) {
  try {
    f();
    ADD_FAILURE() << "expected ag::Error";
  } catch (const Error& e) {
    const std::string message = e.what();
    for (const char* fragment : fragments)
      EXPECT_NE(message.find(fragment), std::string::npos)
          << "message '" << message << "' lacks '" << fragment << "'";
  }
}
}  // namespace

// One case a line, a table to read down: clang-format would give each call that does not
// fit in 100 columns five lines of its own.
// clang-format off
TEST(Errors, BroadcastMismatchNamesOpAndShapes) {
  expect_error([] { add(ones({2, 3}), ones({4})); }, {"add", "[2, 3]", "[4]"});
  expect_error([] { mul(ones({2, 3}), ones({3, 2})); }, {"mul", "[2, 3]", "[3, 2]"});
}

TEST(Errors, MatmulInnerSizes) {
  expect_error([] { matmul(ones({2, 3}), ones({4, 5})); }, {"matmul", "[2, 3]", "[4, 5]", "inner"});
  expect_error([] { matmul(ones({2, 2, 3}), ones({3, 3, 4})); }, {"matmul", "batch"});
  expect_error([] { matmul(ones({3}), ones({3, 4})); }, {"matmul", "[3]"});
  expect_error([] { transpose_matmul(ones({2, 4, 3}), ones({4, 5})); },
               {"transpose_matmul", "batch", "[2, 4, 3]", "[4, 5]"});
}

TEST(Errors, AxisOutOfRange) {
  expect_error([] { sum(ones({2, 3}), {2}); }, {"sum", "axis 2", "2 dimensions"});
  expect_error([] { max(ones({2, 3}), -3); }, {"max", "axis -3"});
  expect_error([] { slice(ones({2, 3}), 5, 0, 1); }, {"slice", "axis 5"});
  expect_error([] { permute(ones({2, 3}), {0, 0}); }, {"permute", "twice"});
  expect_error([] { cumsum(ones({2, 3}), 2); }, {"cumsum", "axis 2", "2 dimensions"});
  expect_error([] { cumsum(ones({2, 3}), -3, true); }, {"cumsum", "axis -3"});
  expect_error([] { cumsum(scalar(1), 0); }, {"cumsum", "axis 0", "0 dimensions"});
}

TEST(Errors, ReshapeAndSlice) {
  expect_error([] { reshape(ones({2, 3}), {4, 2}); }, {"reshape", "[2, 3]", "[4, 2]"});
  expect_error([] { reshape(ones({2, 3}), {-1, -1}); }, {"reshape", "-1"});
  expect_error([] { slice(ones({2, 3}), 1, 2, 5); }, {"slice", "[2, 5)", "[2, 3]"});
}

TEST(Errors, ConcatMismatch) {
  expect_error([] { concat({ones({2, 3}), ones({3, 3})}, 1); }, {"concat", "[2, 3]", "[3, 3]"});
  expect_error([] { concat({}, 0); }, {"concat"});
}

TEST(Errors, EmbeddingIdOutOfRange) {
  expect_error([] { embedding(ones({5, 2}), Indices{{1, 5}, {2}}); }, {"embedding", "id 5", "5 rows"});
  expect_error([] { embedding(ones({5, 2}), Indices{{1, 2}, {3}}); }, {"embedding", "[3]"});
  expect_error([] { gather_columns(ones({2, 3}), Indices{{0, 3}, {2, 1}}); },
               {"gather_columns", "index 3", "row 1", "3 columns"});
  expect_error([] { gather_columns(ones({2, 3}), Indices{{0, 1, 2}, {3, 1}}); },
               {"gather_columns", "[3, 1]", "[2, 3]"});
  expect_error([] { gather_columns(ones({3}), Indices{{0}, {1, 1}}); }, {"gather_columns", "[3]"});
  expect_error([] { scatter_add_columns(ones({2, 2}), Indices{{0, 1, 4, 0}, {2, 2}}, 4); },
               {"scatter_add_columns", "index 4", "row 1", "4 columns"});
  expect_error([] { scatter_add_columns(ones({2, 2}), Indices{{0, 1, 1}, {1, 3}}, 4); },
               {"scatter_add_columns", "[2, 2]", "[1, 3]"});
  expect_error([] { scatter_add_columns(ones({2, 2}), Indices{{0, 1, 1, 0}, {2, 2}}, 0); },
               {"scatter_add_columns", "width", "0"});
}

// chapter: 10
TEST(Errors, GatherInterpolatedShapesDtypesAndNaN) {
  expect_error([] { gather_interpolated(ones({2, 3, 5}), ones({2, 4, 2})); }, {"gather_interpolated", "[2, 3, 5]", "[2, 4, 2]"});
  expect_error([] { gather_interpolated(ones({3, 5}), ones({2, 3, 2})); }, {"gather_interpolated", "[3, 5]", "[2, 3, 2]"});
  expect_error([] { gather_interpolated(ones({2, 0}), ones({2, 3})); }, {"gather_interpolated", "at least one position", "[2, 0]"});
  expect_error([] { gather_interpolated(ones({2, 3}), ones({2, 3}, Dtype::f64)); }, {"gather_interpolated", "float32", "float64"});
  expect_error([] { gather_interpolated(ones({2, 3}), from_vector({0.5, 1, 2, std::nan("")}, {2, 2})); },
               {"gather_interpolated", "NaN", "row 1", "slot 1"});
}

TEST(Errors, CrossEntropyTargets) {
  expect_error([] { cross_entropy(ones({2, 3}), Indices{{0, 3}, {2}}); }, {"cross_entropy", "target 3"});
  expect_error([] { cross_entropy(ones({2, 3}), Indices{{-1, -1}, {2}}); }, {"cross_entropy", "ignore"});
  expect_error([] { cross_entropy(ones({2, 3}), Indices{{0}, {1}}); }, {"cross_entropy", "1 targets"});
}

TEST(Errors, LayerNormParameterShapes) {
  expect_error([] { layer_norm(ones({2, 4}), ones({3}), zeros({3})); }, {"layer_norm", "[3]", "[2, 4]"});
}

TEST(Errors, MixedDtypes) {
  expect_error([] { add(ones({2}, Dtype::f32), ones({2}, Dtype::f64)); }, {"add", "float32", "float64"});
  expect_error([] { ones({2}).data<double>(); }, {"float64", "float32"});
}

TEST(Errors, FactoriesAndAccess) {
  expect_error([] { from_vector({1, 2, 3}, {2, 2}); }, {"from_vector", "[2, 2]"});
  expect_error([] { ones({2, 2}).item(); }, {"item", "[2, 2]"});
  expect_error([] { ones({2, 2}).at({0, 2}); }, {"at", "[2, 2]"});
  expect_error([] { Tensor().shape(); }, {"empty"});
}
// clang-format on

TEST(Errors, LinearInputWidth) {
  Rng rng(1);
  Linear layer(4, 2, rng);
  expect_error([&] { layer.forward(ones({3, 5})); }, {"Linear", "[3, 5]", "4"});
}
