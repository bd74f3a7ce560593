// The synthetic tasks (and a character language model) behind one interface.
// Every task yields batches of token ids with targets; a target of kIgnore takes no part in
// the loss or the accuracy.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ag/ops.hpp"
#include "ag/random.hpp"

namespace pe {

/// A target that scores nothing (cross_entropy's ignore_index).
inline constexpr std::int64_t kIgnore = -1;

/// inputs [B, T] and targets [B, T]; targets[b, t] is what the model should predict after
/// reading inputs[b, 0..t], or kIgnore.
struct Batch {
  ag::Indices inputs;   ///< token ids [B, T]
  ag::Indices targets;  ///< token ids or kIgnore [B, T]
};

/// A synthetic sequence task: how to draw batches of it and how to print its tokens.
class Task {
 public:
  virtual ~Task() = default;
  virtual std::string name() const = 0;         ///< as `pe train --task` takes it
  virtual std::string description() const = 0;  ///< one line for `pe list`
  virtual std::int64_t vocab_size() const = 0;  ///< V: ids run from 0 to V-1
  /// The shortest sequence the task can make (ShiftK needs more than k tokens).
  virtual std::int64_t min_length() const { return 2; }
  /// `batch` fresh sequences of `length` tokens drawn from rng.
  virtual Batch sample(std::int64_t batch, std::int64_t length, ag::Rng& rng) const = 0;
  /// A fixed held-out set: the same (count, length, seed) always gives the same batch, and
  /// it is drawn from a stream that training never uses.
  Batch held_out(std::int64_t count, std::int64_t length, std::uint64_t seed) const;
  /// The Rng::fork stream held_out draws from: ag::Rng(seed).fork(kHeldOutStream). Training
  /// batches must come from a different stream so that they never repeat the held-out set.
  static constexpr std::uint64_t kHeldOutStream = 0x4E1D0;
  /// A token as text, for printing ("A".."Z" for the letter tasks).
  virtual std::string token_text(std::int64_t token) const;
};

/// Options a task may read ("k" for ShiftK, "corpus" for the language model, ...).
using TaskOptions = std::map<std::string, std::string>;

/// ShiftK: random letters; the target at position i is the letter at i - k (k = 4 by
/// default); the first k positions are ignored.
/// AlternatingChar: two distinct random letters alternating (ABAB...); the target is the next
/// letter. Position 0 is ignored: the second letter cannot be known from the first alone.
/// Copy: random letters whose second half repeats the first; only the positions whose next
/// letter is a copy are scored.
/// AssociativeRecall: key-value letter pairs, then one of the keys again; only the final
/// position is scored, and its target is that key's value.
/// CharLM: next-character prediction over windows of a text file ("corpus" option; by default
/// /usr/share/common-licenses/GPL-3, which every Debian system has).
std::unique_ptr<Task> make_task(const std::string& name, const TaskOptions& options = {});
/// The names make_task accepts: shiftk, alternating, copy, recall, charlm.
std::vector<std::string> task_names();

}  // namespace pe
