// The absolute positions of the tokens of one forward call. Usually they are contiguous
// (0 .. T-1 for a full pass, offset .. offset+T-1 when decoding with a cache); randomized
// positions (Ruoss et al., 2023) train on a sorted random subset of 0 .. L_max-1 instead, so
// that the positions a model meets at test length were already seen in training.
#pragma once
#include <cstdint>
#include <vector>

#include "ag/random.hpp"
#include "ag/tensor.hpp"

namespace pe {

/// The positions of the tokens of one forward call, shared by the whole batch: either
/// contiguous from a first position, or an explicit sorted list of distinct ids.
///
/// Keys go with queries (keys()): contiguous queries attend to keys 0 .. Tk-1 (the cache
/// holds the sequence from its beginning); sampled queries attend to keys at the same ids
/// (Tq == Tk: a full pass, never a cache).
class Positions {
 public:
  /// first, first+1, ...: as many as the call has tokens. Implicit, so that an offset given
  /// where positions are expected keeps its meaning (0 is a full pass).
  Positions(std::int64_t first = 0);
  /// Exactly these positions, one per token: sorted, distinct and non-negative (anything else
  /// is an ag::Error naming the first bad id). An empty list is refused too.
  explicit Positions(std::vector<std::int64_t> ids);
  /// Contiguous queries first, first+1, ... attending to keys at explicit positions: the keys
  /// a trimmed cache kept (chapter 12's window with sinks keeps keys 0..S-1 and the last W, at
  /// their original positions). key_ids must be sorted, distinct and non-negative; keys(count)
  /// then gives exactly them (count must equal their number).
  static Positions with_keys(std::int64_t first, std::vector<std::int64_t> key_ids);

  bool is_contiguous() const { return sampled_.empty(); }  ///< made from a first position
  std::int64_t first() const;                              ///< the position of token 0
  /// The position of token i (for sampled positions i must be below size()).
  std::int64_t at(std::int64_t i) const {
    return sampled_.empty() ? first_ + i : sampled_.at(static_cast<std::size_t>(i));
  }
  /// The number of sampled ids; contiguous positions fit any count and give -1.
  std::int64_t size() const;
  /// An ag::Error, naming `who`, unless these positions can serve `count` tokens (sampled
  /// ones hold exactly count ids).
  void check_count(std::int64_t count, const char* who) const;
  /// The positions of `count` tokens, in order (checked as check_count does).
  std::vector<std::int64_t> ids(std::int64_t count) const;
  /// One past the largest position of `count` tokens: the table length they need.
  std::int64_t end(std::int64_t count) const;
  /// The positions of the Tk = count keys that these queries attend to: 0 .. Tk-1 for
  /// contiguous queries (the cache starts at the sequence's beginning), the same ids for
  /// sampled ones (then Tk must equal size()), or the explicit ids of with_keys (then Tk must
  /// equal their number).
  Positions keys(std::int64_t count) const;
  /// The same positions (contiguous from the same first, or the same ids).
  bool operator==(const Positions& other) const;
  /// Whether the keys were given explicitly (with_keys: a trimmed cache).
  bool has_explicit_keys() const { return !key_ids_.empty(); }
  /// Not the same positions.
  bool operator!=(const Positions& other) const { return !(*this == other); }

 private:
  std::int64_t first_ = 0;
  std::vector<std::int64_t> sampled_;  // empty: contiguous from first_
  std::vector<std::int64_t> key_ids_;  // empty: the keys follow from the queries (keys())
};

/// Randomized positions (Ruoss et al., 2023): `count` distinct positions drawn uniformly
/// from 0 .. max_positions-1 without replacement, sorted. count <= max_positions (equal gives
/// 0 .. count-1); anything else is an ag::Error. Draws count numbers from rng (Floyd's
/// algorithm), so the same rng state gives the same positions on every machine.
Positions random_positions(std::int64_t count, std::int64_t max_positions, ag::Rng& rng);

/// The seed of the positions at which a model trained at randomized positions is evaluated:
/// fixed, so that every evaluation of a model sees the same positions.
inline constexpr std::uint64_t kEvaluationPositionsSeed = 20230526;

/// The positions of one evaluation call (one forward pass over `length` tokens) of a model
/// trained with randomized positions up to max_positions = L_max; 0 means trained at
/// contiguous positions, and gives 0 .. length-1.
///
/// The convention is Ruoss et al.'s (2023): their code (noisy_fixed_positional_encodings)
/// draws one sorted set per call, shared by the batch, at every call, evaluation included, so
/// a model trained this way is also evaluated at sorted random positions from 0 .. L_max-1.
/// rng is a generator seeded with kEvaluationPositionsSeed at the start of the evaluation,
/// drawn from once per call. A length above L_max cannot be drawn: an ag::Error that says so.
Positions evaluation_positions(std::int64_t length, std::int64_t max_positions, ag::Rng& rng);

/// The rows of table [L, ...] at the positions of `count` tokens: [count, ...]. A slice for
/// contiguous positions, a gather (ag::embedding) for sampled ones; a position at or past L
/// is an ag::Error naming `who`.
ag::Tensor rows_at(const ag::Tensor& table, const Positions& positions, std::int64_t count,
                   const char* who);

}  // namespace pe
