#include "ag/random.hpp"

#include <cmath>
#include <sstream>

#include "ag/src/impl.hpp"

namespace ag {

namespace {
std::uint64_t splitmix64(std::uint64_t& x) {
  std::uint64_t z = (x += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}
std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
}  // namespace

Rng::Rng(std::uint64_t seed) : seed_(seed) {
  std::uint64_t s = seed;
  for (auto& word : state_) word = splitmix64(s);
}

std::uint64_t Rng::next_u64() {
  const std::uint64_t result = rotl(state_[1] * 5, 7) * 9;
  const std::uint64_t t = state_[1] << 17;
  state_[2] ^= state_[0];
  state_[3] ^= state_[1];
  state_[1] ^= state_[2];
  state_[0] ^= state_[3];
  state_[2] ^= t;
  state_[3] = rotl(state_[3], 45);
  return result;
}

double Rng::uniform() { return double(next_u64() >> 11) * 0x1.0p-53; }  // 53 random bits

double Rng::uniform(double low, double high) { return low + (high - low) * uniform(); }

double Rng::normal(double mean, double stddev) {
  const double u1 = 1.0 - uniform();  // in (0, 1], so log(u1) is finite
  const double u2 = uniform();
  return mean + stddev * std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

std::int64_t Rng::randint(std::int64_t low, std::int64_t high) {
  check(low < high, "Rng::randint", "empty range [", low, ", ", high, ")");
  const auto span = static_cast<std::uint64_t>(high - low);
  return low + static_cast<std::int64_t>(next_u64() % span);  // bias below 2^-40 for our spans
}

Rng Rng::fork(std::uint64_t stream) const {
  std::uint64_t s = seed_ ^ (stream * 0xD1B54A32D192ED03ULL);
  return Rng(splitmix64(s));
}

std::string Rng::save_state() const {
  std::ostringstream text;
  text << seed_;
  for (auto word : state_) text << ' ' << word;
  return text.str();
}

Rng Rng::from_state(const std::string& text) {
  std::istringstream in(text);
  Rng rng;
  in >> rng.seed_;
  for (auto& word : rng.state_) in >> word;
  check(!in.fail(), "Rng::from_state", "'", text, "' is not a saved generator state");
  return rng;
}

Tensor randn(const Shape& shape, Rng& rng, Dtype dtype, double stddev) {
  Tensor out = empty(shape, dtype);
  dispatch(dtype, [&](auto t) {
    using T = decltype(t);
    T* p = out.data<T>();
    for (std::int64_t i = 0, n = out.numel(); i < n; ++i)
      p[i] = static_cast<T>(rng.normal(0.0, stddev));
  });
  return out;
}

Tensor rand_uniform(const Shape& shape, Rng& rng, double low, double high, Dtype dtype) {
  Tensor out = empty(shape, dtype);
  dispatch(dtype, [&](auto t) {
    using T = decltype(t);
    T* p = out.data<T>();
    for (std::int64_t i = 0, n = out.numel(); i < n; ++i)
      p[i] = static_cast<T>(rng.uniform(low, high));
  });
  return out;
}

}  // namespace ag
