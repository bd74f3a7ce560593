// The synthetic tasks (and a character language model) behind one interface.
// Every task yields batches of token ids with targets; a target of kIgnore takes no part in
// the loss or the accuracy.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
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

/// What a checkpoint keeps of a task whose tokens come from a file (charlm's corpus), so that
/// a model read back later is refused when the file no longer makes the tokens it learned.
/// Trainer::save stores it; Trainer::resume and Trainer::load_weights compare it
/// (check_same_source).
struct TaskSource {
  std::string file;              ///< the file, as the task's option names it
  std::string characters;        ///< the vocabulary: token t is the byte characters[t]
  std::uint64_t text_bytes = 0;  ///< the length of the whole text
  std::uint64_t text_hash = 0;   ///< FNV-1a 64 of the whole text: the data stream's source
};

/// How much of a task's source may have changed since a model was trained on it.
enum class SourceChange {
  /// None: the run continues (Trainer::resume), and another text would give another stream
  /// of training windows and another held-out set.
  none,
  /// The text, as long as the characters are the same (Trainer::load: evaluating or
  /// generating needs only the token mapping).
  text_only,
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
  /// Refuses, with an ag::Error naming the task, a length it cannot make: one below
  /// min_length() or one against a rule of its own (copy and flipflop take even lengths only).
  /// sample() checks its length so; a run checks its lengths with it before it trains.
  void check_length(std::int64_t length) const;
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
  /// Where the tokens come from when a file decides them (charlm); none for a task whose
  /// tokens are fixed by its code.
  virtual std::optional<TaskSource> source() const { return std::nullopt; }

 protected:
  /// The task's own length rules beyond min_length() (parity, an upper limit, ...); none by
  /// default.
  virtual void check_length_rules(std::int64_t /*length*/) const {}
};

/// Refuses, with one line that names the file and says what changed, a task whose source
/// differs from `trained` (what task.source() gave when the model was trained) by more than
/// `allowed`: other characters (their spelling, new and gone), or, with SourceChange::none,
/// another text. `fix` ends the message: what the reader should do. A task without a source
/// passes (the caller compares vocabulary sizes).
void check_same_source(const Task& task, const TaskSource& trained, SourceChange allowed,
                       const std::string& fix);

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
/// FlipFlop ("flipflop", Liu et al. 2023): instruction-bit pairs, the instructions w (write),
/// i (ignore) and r (read) drawn with probability p for i and (1 - p) / 2 each for w and r
/// ("ignore" option, 0 <= p < 1, 0.8 by default: the paper's training set; its
/// out-of-distribution sets are 0.98, sparse, and 0.1, dense). The first instruction writes
/// and the last one reads; the target at each r is the bit of the last w (which r's own bit
/// repeats), so a read's answer is always in the sequence. Tokens w, i, r, 0, 1; even
/// lengths of at least 4.
/// SelectiveCopy ("selcopy", Gu and Dao 2023): `count` letters ("count" option, 8 by default)
/// at random places among blanks, a separator, then the same letters in order, scored as
/// Copy scores its copy. At length T the first T - count - 1 tokens are the letters and
/// blanks, so a longer sequence has more blanks between the letters. Tokens A..Z, blank (_),
/// separator (sep); lengths of at least 2 * count + 1.
/// Counting ("counting", Golovneva et al. 2024, CoPE): a program of `x =0`, `x ++` and
/// `pass` statements over "vars" variables (1..8, 3 by default), drawn with the paper's
/// weights (set 1, pass 50, increment 7; values up to 10), then `print x`; only the last
/// position is scored, and its target is x's value. The program fills the sequence, so a
/// longer sequence is a longer program with more `pass` between the increments; the paper
/// also tests with more variables than it trained on. Tokens: the values 0..10, =0, ++,
/// pass, print, the variables a..h (all eight whatever "vars" is).
/// CharLM: next-character prediction over windows of a text file ("corpus" option; by default
/// /usr/share/common-licenses/GPL-3, which every Debian system has).
std::unique_ptr<Task> make_task(const std::string& name, const TaskOptions& options = {});
/// The names make_task accepts: shiftk, alternating, copy, recall, flipflop, selcopy,
/// counting, charlm.
std::vector<std::string> task_names();

}  // namespace pe
