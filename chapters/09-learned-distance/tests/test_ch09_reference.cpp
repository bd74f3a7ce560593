// Chapter 9's encodings against values computed independently from the papers' definitions:
// each value below was computed in plain Python (the math module, double precision) from the
// formula quoted beside it, not from this code, for parameters set by hand.
#include <gtest/gtest.h>

#include <vector>

#include "chapters/09-learned-distance/dynamic_position_bias.hpp"
#include "chapters/09-learned-distance/fire.hpp"
#include "chapters/09-learned-distance/xpos.hpp"

using namespace pe;

namespace {

constexpr auto f64 = ag::Dtype::f64;

void set(ag::Tensor& parameter, std::vector<double> values, ag::Shape shape) {
  parameter.copy_from(ag::from_vector(values, shape, f64));
}

}  // namespace

// FIRE (Li et al. 2024, eq. for b(i, j) and their implementation): c = 0.1, L = 512,
// eps = 1e-6, u = log(c d + 1) / (log(c max(L, i) + 1) + eps), and by hand
// f(u) = 2 relu(u) + 3 relu(u - 0.05) + 0.25 (hidden units (1, 0) and (1, -0.05); output
// weights 2 and 3, bias 0.25). Python: u = math.log(0.1*d + 1) / (math.log(0.1*max(512, i) + 1)
// + 1e-6); f = 2*max(u, 0) + 3*max(u - 0.05, 0) + 0.25.
TEST(Ch09Reference, FireEqualsThePapersFormulaForAHandSetFunction) {
  ag::Rng rng(1);
  FireOptions options;
  options.width = 2;
  FireBias fire(1, options, rng, f64);
  set(fire.f.layers[0]->weight, {1, 1}, {1, 2});
  set(fire.f.layers[0]->bias, {0, -0.05}, {2});
  set(fire.f.layers[1]->weight, {2, 3}, {2, 1});
  set(fire.f.layers[1]->bias, {0.25}, {1});
  struct Case {
    std::int64_t i, j;
    double b;
  };
  // below the threshold (i = 10 < L: the scale is log(52.2)) and past it (i = 1000)
  for (const Case& c : {Case{10, 10, 0.25}, Case{10, 6, 0.5253667932118973},
                        Case{10, 0, 0.9762737644549648}, Case{1000, 996, 0.46453236972566814},
                        Case{1000, 500, 4.3597205928126845}, Case{1000, 0, 5.099998916604908}}) {
    const ag::Tensor bias = fire.bias(1, c.i + 1, c.i);  // one query at i, keys 0 .. i
    EXPECT_NEAR(bias.at({0, 0, c.j}), c.b, 1e-12) << c.i << " " << c.j;
  }
}

// The dynamic position bias (x-transformers' DynamicPositionBias: Linear(1, w), SiLU,
// Linear(w, w), SiLU, Linear(w, H) of the distance i - j), with w = 2, H = 1 and by hand
// W0 = [0.5, -0.25], b0 = [0.1, 0.2], W1 = [[1, 0.5], [-0.5, 1]] (rows: inputs), b1 = [0, 0.1],
// W2 = [1, -2], b2 = 0.3. Python: silu(z) = z / (1 + math.exp(-z)), the layers as x @ W + b.
TEST(Ch09Reference, DynamicBiasEqualsXTransformersMlpForHandSetWeights) {
  ag::Rng rng(1);
  DynamicBiasOptions options;
  options.width = 2;
  DynamicPositionBias dpb(1, options, rng, f64);
  set(dpb.f.layers[0]->weight, {0.5, -0.25}, {1, 2});
  set(dpb.f.layers[0]->bias, {0.1, 0.2}, {2});
  set(dpb.f.layers[1]->weight, {1, 0.5, -0.5, 1}, {2, 2});
  set(dpb.f.layers[1]->bias, {0, 0.1}, {2});
  set(dpb.f.layers[2]->weight, {1, -2}, {2, 1});
  set(dpb.f.layers[2]->bias, {0.3}, {1});
  const ag::Tensor bias = dpb.bias(1, 41, 40);  // the query at 40, keys 0 .. 40
  const std::vector<std::pair<std::int64_t, double>> expected = {{0, 0.03477310810282591},
                                                                 {1, 0.23381300034198063},
                                                                 {5, 1.1393451739784741},
                                                                 {40, 0.10215205349443152}};
  for (const auto& [d, b] : expected) EXPECT_NEAR(bias.at({0, 0, 40 - d}), b, 1e-12) << d;
}

// xPos (Sun et al. 2022, and torchscale's XPOS): zeta_i = (2i/D + 0.4) / 1.4, a query at m
// scaled by zeta_i^(m/512) and a key at n by zeta_i^(-n/512). D = 8. Python:
// z = (2*i/8 + 0.4)/1.4; z**(m/512), z**(-m/512).
TEST(Ch09Reference, XposScalesEqualThePapersDecay) {
  const std::vector<double> zeta = xpos_zeta(8, 0.4);
  const std::vector<double> expected_zeta = {0.28571428571428575, 0.46428571428571436,
                                             0.6428571428571429, 0.8214285714285714};
  ASSERT_EQ(zeta.size(), expected_zeta.size());
  for (std::size_t i = 0; i < zeta.size(); ++i) EXPECT_NEAR(zeta[i], expected_zeta[i], 1e-15);
  const XposOptions options;  // gamma 0.4, B = 512
  struct Case {
    std::int64_t m;
    std::vector<double> query, key;
  };
  for (const Case& c :
       {Case{100,
             {0.782954834501328, 0.8608331995960548, 0.917323159399417, 0.9623087062319714},
             {1.2772128811707386, 1.1616652337168794, 1.0901283694338564, 1.0391675701611525}},
        Case{1000,
             {0.0865699368828696, 0.22345500163984466, 0.4219136552494119, 0.6809953551758675},
             {11.551354153729081, 4.475173939546709, 2.3701531997319583, 1.4684387968281358}}}) {
    const ag::Tensor q = xpos_scale(1, c.m, 8, options, +1, f64);
    const ag::Tensor k = xpos_scale(1, c.m, 8, options, -1, f64);
    for (std::int64_t i = 0; i < 4; ++i)
      for (std::int64_t coordinate : {2 * i, 2 * i + 1}) {  // both coordinates of plane i
        EXPECT_NEAR(q.at({0, coordinate}), c.query[std::size_t(i)], 1e-12) << c.m << " " << i;
        EXPECT_NEAR(k.at({0, coordinate}), c.key[std::size_t(i)], 1e-12) << c.m << " " << i;
      }
  }
}
