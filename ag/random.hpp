// A seeded random generator whose streams are the same on every machine and compiler
// (the standard library's distributions are not: their algorithms are unspecified).
#pragma once
#include <cstdint>
#include <string>

#include "ag/tensor.hpp"

namespace ag {

/// xoshiro256** seeded through splitmix64; normals by the Box-Muller transform.
class Rng {
 public:
  /// \param seed the same seed gives the same stream on every machine.
  explicit Rng(std::uint64_t seed = 0);
  std::uint64_t next_u64();                                   ///< the next raw 64-bit draw
  double uniform();                                           ///< in [0, 1)
  double uniform(double low, double high);                    ///< in [low, high)
  double normal(double mean = 0.0, double stddev = 1.0);      ///< a draw from N(mean, stddev^2)
  std::int64_t randint(std::int64_t low, std::int64_t high);  ///< in [low, high)
  /// An independent generator for a named stream (data, init, dropout, ...): the same
  /// seed and stream always give the same sequence, whatever else was drawn before.
  Rng fork(std::uint64_t stream) const;
  /// The whole state as text, and back: a resumed run continues the same stream.
  std::string save_state() const;
  /// The generator that save_state() described; an ag::Error on malformed text.
  static Rng from_state(const std::string& text);

 private:
  std::uint64_t seed_;
  std::uint64_t state_[4];
};

/// A new leaf of independent draws from N(0, stddev^2), in row-major order.
Tensor randn(const Shape& shape, Rng& rng, Dtype dtype = Dtype::f32, double stddev = 1.0);
/// A new leaf of independent draws from the uniform distribution on [low, high).
Tensor rand_uniform(const Shape& shape, Rng& rng, double low, double high,
                    Dtype dtype = Dtype::f32);

}  // namespace ag
