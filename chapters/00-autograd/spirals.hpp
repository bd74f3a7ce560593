// Chapter 0's toy problem: two interleaved spirals, one per class, and what we measure on it.
#pragma once
#include <cmath>
#include <cstdint>
#include <numbers>
#include <vector>

#include "ag/functional.hpp"
#include "ag/random.hpp"
#include "chapters/00-autograd/mlp.hpp"

namespace ch00 {

/// Points in the plane with a class each: the two-spirals problem.
struct Dataset {
  ag::Tensor x;   ///< points [B, 2]
  ag::Indices y;  ///< class of each point [B], 0 or 1
};

/// `per_class` points on each of two spirals, the second the first turned by half a turn.
/// Point i of a spiral sits at radius r = 0.1 + 0.9 i / per_class and angle 2 turns * r,
/// with Gaussian noise of standard deviation `noise` added to both coordinates.
inline Dataset two_spirals(std::int64_t per_class, double noise, ag::Rng& rng,
                           ag::Dtype dtype = ag::Dtype::f32) {
  const double turns = 2.0;
  std::vector<double> xs;
  Dataset data;
  for (std::int64_t i = 0; i < per_class; ++i) {
    for (int c = 0; c < 2; ++c) {
      const double r = 0.1 + 0.9 * double(i) / double(per_class);
      const double angle = 2.0 * std::numbers::pi * turns * r + std::numbers::pi * c;
      xs.push_back(r * std::cos(angle) + rng.normal(0.0, noise));
      xs.push_back(r * std::sin(angle) + rng.normal(0.0, noise));
      data.y.values.push_back(c);
    }
  }
  data.x = ag::from_vector(xs, {2 * per_class, 2}, dtype).set_name("x");
  data.y.shape = {2 * per_class};
  return data;
}

/// Mean cross-entropy of the model's logits on the whole set: a scalar [].
inline ag::Tensor loss(const MLP& model, const Dataset& data) {
  return ag::composite::cross_entropy(model.forward(data.x), data.y);
}

/// Fraction of points whose larger logit is their class. logits: [B, 2].
inline double accuracy(const ag::Tensor& logits, const Dataset& data) {
  const std::vector<double> z = logits.to_vector();
  std::int64_t right = 0;
  for (std::size_t n = 0; n < data.y.values.size(); ++n) {
    const std::int64_t guess = z[2 * n + 1] > z[2 * n] ? 1 : 0;
    right += guess == data.y.values[n];
  }
  return double(right) / double(data.y.values.size());
}

}  // namespace ch00
