// What chapter 9's three bias encodings share: a learned function of the distance between a
// query and a key, b(i, j) = f(i - j) for each head (FIRE also reads the query's position),
// added to the scores through chapter 1's bias hook. KERPLE, FIRE and the dynamic position
// bias differ only in the function; the distances, the hook and whether every layer shares one
// function or each layer learns its own are here.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "chapters/01-attention/positional_encoding.hpp"

namespace pe {

/// d[i, j] = max(p_i - p_j, 0) for query i at position p_i of q_positions (an offset o means
/// o .. o+Tq-1) and key j at p_j of q_positions.keys(Tk) (then 0 .. Tk-1): how far key j lies
/// behind query i. A future key (p_j > p_i) gets 0; the causal mask hides it afterwards
/// whatever the bias says (KERPLE's own code does the same).  -> [Tq, Tk]
ag::Tensor causal_distances(std::int64_t queries, std::int64_t keys, const Positions& q_positions,
                            ag::Dtype dtype);
/// The same distances as integers, to pick rows of a table by distance.  -> Indices [Tq, Tk]
ag::Indices causal_distance_indices(std::int64_t queries, std::int64_t keys,
                                    const Positions& q_positions);
/// The queries' positions p_i as a column (o .. o+Tq-1 for an offset o).  -> [Tq, 1]
ag::Tensor query_positions(std::int64_t queries, const Positions& q_positions, ag::Dtype dtype);

/// A learned distance function: one bias per head for every (query, key) pair, built from
/// framework ops so that the gradient reaches its parameters.
class DistanceBias : public ag::Module {
 public:
  /// H, the number of heads it gives a bias to.
  virtual std::int64_t heads() const = 0;
  /// bias[h, i, j] for queries at q_positions and keys at q_positions.keys(Tk), in the
  /// dtype of its parameters.  -> [H, Tq, Tk]
  virtual ag::Tensor bias(std::int64_t queries, std::int64_t keys,
                          const Positions& q_positions) const = 0;
};

/// The part of a bias encoding in one attention layer: scores + function.bias, through the bias
/// hook. When the part owns its function (one per layer), the function's parameters are this
/// layer's (registered as the child "function"); otherwise every layer holds a handle to the
/// encoding's one function.
class DistanceBiasPositions : public AttentionPositions {
 public:
  /// \param function the distance function  \param owns whether this layer owns it
  DistanceBiasPositions(std::shared_ptr<DistanceBias> function, bool owns);
  /// scores [B, H, Tq, Tk] -> scores + bias [H, Tq, Tk] (broadcast over B); q, k unused.
  ag::Tensor bias(const ag::Tensor& scores, const ag::Tensor& q, const ag::Tensor& k,
                  const Positions& q_positions) const override;
  const DistanceBias& function() const { return *function_; }  ///< the function it adds
  bool owns() const { return owns_; }  ///< true when the function is this layer's own

 private:
  std::shared_ptr<DistanceBias> function_;
  bool owns_;
};

/// A bias encoding: nothing before the first block; each attention layer gets a
/// DistanceBiasPositions. Shared (one function, the encoding's parameter, as T5's table in
/// chapter 4) or per layer (each layer draws its own in make_attention_part), as the encoding's
/// source does.
class DistanceBiasEncoding : public PositionalEncoding {
 public:
  /// One function for every layer, or one per layer.
  bool shared() const { return shared_; }
  /// The function every layer shares; null when each layer has its own.
  const std::shared_ptr<DistanceBias>& shared_function() const { return shared_function_; }
  /// A part with the shared function, or with a new function drawn from rng.
  std::shared_ptr<AttentionPositions> make_attention_part(ag::Rng& rng) const override;

 protected:
  /// \param shared whether all layers share one function
  explicit DistanceBiasEncoding(bool shared) : shared_(shared) {}
  /// A new function with its initial values drawn from rng.
  virtual std::shared_ptr<DistanceBias> make_function(ag::Rng& rng) const = 0;
  /// Called once at the end of a subclass's constructor: when shared, draws the one function
  /// and registers it as the child "function" (make_function is virtual, so the base cannot).
  void make_shared_function(ag::Rng& rng);

 private:
  bool shared_;
  std::shared_ptr<DistanceBias> shared_function_;
};

}  // namespace pe
