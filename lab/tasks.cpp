// The tasks behind make_task. Each one fills a batch sequence by sequence; the shared
// SequenceTask base checks the shape once and starts every target at kIgnore, so a task only
// writes the positions it scores.
#include "lab/tasks.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <numeric>
#include <span>
#include <sstream>

#include "ag/error.hpp"
#include "ag/files.hpp"
#include "ag/numbers.hpp"

namespace pe {

namespace {

// token_text's check, shared by every task that spells its own tokens.
void check_token(const Task& task, std::int64_t token) {
  ag::check(token >= 0 && token < task.vocab_size(), "token_text", "token ", token,
            " is outside the vocabulary [0, ", task.vocab_size(), ") of task ", task.name());
}

}  // namespace

Batch Task::held_out(std::int64_t count, std::int64_t length, std::uint64_t seed) const {
  // A fork depends only on the seed and the stream, so this set is the same however much
  // training has drawn, and training (on other streams) never draws it.
  ag::Rng rng = ag::Rng(seed).fork(kHeldOutStream);
  return sample(count, length, rng);
}

void Task::check_length(std::int64_t length) const {
  ag::check(length >= min_length(), "length", "task ", name(), " cannot make sequences of length ",
            length, ": the minimum is ", min_length());
  check_length_rules(length);
}

std::string Task::token_text(std::int64_t token) const {
  check_token(*this, token);
  if (token < 26) return std::string(1, static_cast<char>('A' + token));
  // Built with append: GCC 12 misreads `"<" + to_string + ">"` as an overlapping memcpy.
  std::string text = "<";
  text.append(std::to_string(token)).append(">");
  return text;
}

namespace {

constexpr std::int64_t kLetters = 26;
using Tokens = std::span<std::int64_t>;

std::int64_t random_letter(ag::Rng& rng) { return rng.randint(0, kLetters); }

// A task whose sequences are independent: sample() = checks + one fill() per row.
class SequenceTask : public Task {
 public:
  Batch sample(std::int64_t batch, std::int64_t length, ag::Rng& rng) const final {
    ag::check(batch >= 1, "sample", "task ", name(), " needs a batch of at least 1, got ", batch);
    check_length(length);
    const auto size = static_cast<std::size_t>(batch * length);
    Batch out{{std::vector<std::int64_t>(size), {batch, length}},
              {std::vector<std::int64_t>(size, kIgnore), {batch, length}}};
    for (std::int64_t b = 0; b < batch; ++b) {
      const auto row = static_cast<std::size_t>(b * length);
      fill(Tokens(out.inputs.values).subspan(row, static_cast<std::size_t>(length)),
           Tokens(out.targets.values).subspan(row, static_cast<std::size_t>(length)), rng);
    }
    return out;
  }

 protected:
  /// Writes one sequence; targets arrive filled with kIgnore.
  virtual void fill(Tokens inputs, Tokens targets, ag::Rng& rng) const = 0;
};

class LetterTask : public SequenceTask {
 public:
  std::int64_t vocab_size() const override { return kLetters; }
};

class ShiftK final : public LetterTask {
 public:
  explicit ShiftK(std::int64_t k) : k_(k) {}
  std::string name() const override { return "shiftk"; }
  std::string description() const override {
    return "shiftk: random letters; predict the letter " + std::to_string(k_) +
           " positions back (k=" + std::to_string(k_) + ")";
  }
  std::int64_t min_length() const override { return k_ + 1; }

 protected:
  void fill(Tokens inputs, Tokens targets, ag::Rng& rng) const override {
    for (auto& token : inputs) token = random_letter(rng);
    for (std::size_t i = static_cast<std::size_t>(k_); i < inputs.size(); ++i)
      targets[i] = inputs[i - static_cast<std::size_t>(k_)];
  }

 private:
  std::int64_t k_;
};

class AlternatingChar final : public LetterTask {
 public:
  std::string name() const override { return "alternating"; }
  std::string description() const override {
    return "alternating: two distinct letters ABAB...; predict the next letter";
  }

 protected:
  void fill(Tokens inputs, Tokens targets, ag::Rng& rng) const override {
    const std::int64_t first = random_letter(rng);
    std::int64_t second = rng.randint(0, kLetters - 1);  // skip `first` so the two differ
    if (second >= first) ++second;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      const bool even = i % 2 == 0;
      inputs[i] = even ? first : second;
      // Position 0 alone does not say what the other letter is.
      if (i > 0) targets[i] = even ? second : first;
    }
  }
};

class Copy final : public LetterTask {
 public:
  std::string name() const override { return "copy"; }
  std::string description() const override {
    return "copy: random letters, then the same letters again; predict the copy";
  }
  std::int64_t min_length() const override { return 4; }

 protected:
  void check_length_rules(std::int64_t length) const override {
    ag::check(length % 2 == 0, "length", "task copy needs an even length, got ", length);
  }
  void fill(Tokens inputs, Tokens targets, ag::Rng& rng) const override {
    const std::size_t half = inputs.size() / 2;
    for (std::size_t i = 0; i < half; ++i) inputs[i] = inputs[half + i] = random_letter(rng);
    // Scored: every position whose next letter is part of the copy, from the last letter of
    // the first half (which predicts the copy's first letter) to the second-to-last one.
    for (std::size_t i = half - 1; i + 1 < inputs.size(); ++i) targets[i] = inputs[i + 1];
  }
};

class AssociativeRecall final : public LetterTask {
 public:
  static constexpr std::int64_t kKeys = 13;  // keys are A..M, values N..Z
  static constexpr std::int64_t kMaxLength = 2 * kKeys + 1;

  std::string name() const override { return "recall"; }
  std::string description() const override {
    return "recall: key-value pairs (keys A-M, values N-Z), then a key; predict its value";
  }
  std::int64_t min_length() const override { return 3; }

 protected:
  void check_length_rules(std::int64_t length) const override {
    ag::check(length % 2 == 1, "length", "task recall needs an odd length (pairs + query), got ",
              length);
    ag::check(length <= kMaxLength, "length", "task recall allows at most ", kMaxLength,
              " tokens (", kKeys, " distinct keys), got ", length);
  }
  void fill(Tokens inputs, Tokens targets, ag::Rng& rng) const override {
    const std::size_t pairs = (inputs.size() - 1) / 2;
    const auto keys = distinct_keys(pairs, rng);
    for (std::size_t p = 0; p < pairs; ++p) {
      inputs[2 * p] = keys[p];
      inputs[2 * p + 1] = kKeys + rng.randint(0, kLetters - kKeys);
    }
    const auto asked = static_cast<std::size_t>(rng.randint(0, static_cast<std::int64_t>(pairs)));
    inputs.back() = keys[asked];
    targets.back() = inputs[2 * asked + 1];
  }

 private:
  // The first `count` entries of a partial Fisher-Yates shuffle of A..M.
  static std::array<std::int64_t, kKeys> distinct_keys(std::size_t count, ag::Rng& rng) {
    std::array<std::int64_t, kKeys> keys;
    std::iota(keys.begin(), keys.end(), 0);
    for (std::size_t i = 0; i < count; ++i) {
      const auto j = static_cast<std::size_t>(rng.randint(static_cast<std::int64_t>(i), kKeys));
      std::swap(keys[i], keys[j]);
    }
    return keys;
  }
};

// A task whose tokens are named in a list: the list is the vocabulary, and token t prints as
// its t-th name.
class NamedTokensTask : public SequenceTask {
 public:
  explicit NamedTokensTask(std::vector<std::string> names) : names_(std::move(names)) {}
  std::int64_t vocab_size() const override { return static_cast<std::int64_t>(names_.size()); }
  std::string token_text(std::int64_t token) const override {
    check_token(*this, token);
    return names_[static_cast<std::size_t>(token)];
  }

 private:
  std::vector<std::string> names_;
};

// Liu et al. 2023's flip-flop language FFL(p): instruction-bit pairs; a read repeats the bit
// of the last write. The first instruction writes and the last one reads, so every sequence
// scores at least one read, and every read has a write before it: its answer is always in
// the sequence, however far back.
class FlipFlop final : public NamedTokensTask {
 public:
  static constexpr std::int64_t kWrite = 0, kIgnoreInstruction = 1, kRead = 2, kBitZero = 3;

  explicit FlipFlop(double ignore) : NamedTokensTask({"w", "i", "r", "0", "1"}), ignore_(ignore) {}
  std::string name() const override { return "flipflop"; }
  std::string description() const override {
    std::ostringstream text;
    text << "flipflop: write/ignore/read instructions with bits; at a read, predict the last "
            "written bit (ignore="
         << ignore_ << ")";
    return text.str();
  }
  std::int64_t min_length() const override { return 4; }

 protected:
  void check_length_rules(std::int64_t length) const override {
    ag::check(length % 2 == 0, "length",
              "task flipflop needs an even length (instruction-bit pairs), got ", length);
  }
  void fill(Tokens inputs, Tokens targets, ag::Rng& rng) const override {
    const std::size_t last = inputs.size() - 2;
    std::int64_t written = kBitZero;  // replaced at once: the first instruction writes
    for (std::size_t i = 0; i < inputs.size(); i += 2) {
      const std::int64_t instruction = i == 0 ? kWrite : i == last ? kRead : instruction_of(rng);
      const std::int64_t bit = kBitZero + rng.randint(0, 2);
      if (instruction == kWrite) written = bit;
      inputs[i] = instruction;
      inputs[i + 1] = instruction == kRead ? written : bit;
      // The read predicts the next token, its bit; the bits of w and i are random.
      if (instruction == kRead) targets[i] = written;
    }
  }

 private:
  // FFL(p): i with probability p, w and r with (1 - p) / 2 each.
  std::int64_t instruction_of(ag::Rng& rng) const {
    if (rng.uniform() < ignore_) return kIgnoreInstruction;
    return rng.randint(0, 2) == 0 ? kWrite : kRead;
  }

  double ignore_;
};

// Gu and Dao 2023's selective copying: `count` letters scattered among blanks, a separator,
// then the letters again in order. At length T the letters and T - 2 * count - 1 blanks come
// first (T - count - 1 tokens), then the separator and the copy; a longer sequence only adds
// blanks between the letters.
class SelectiveCopy final : public NamedTokensTask {
 public:
  static constexpr std::int64_t kBlank = kLetters, kSeparator = kLetters + 1;
  static constexpr std::int64_t kMaxCount = 1000;  // keeps min_length() = 2 * count + 1 small

  explicit SelectiveCopy(std::int64_t count) : NamedTokensTask(token_names()), count_(count) {}
  std::string name() const override { return "selcopy"; }
  std::string description() const override {
    return "selcopy: letters among blanks, a separator, then the letters in order; predict "
           "them (count=" +
           std::to_string(count_) + ")";
  }
  // The letters with no blank between them, the separator and the copy.
  std::int64_t min_length() const override { return 2 * count_ + 1; }

 protected:
  void fill(Tokens inputs, Tokens targets, ag::Rng& rng) const override {
    const auto count = static_cast<std::size_t>(count_);
    const std::size_t separator = inputs.size() - count - 1;  // the letters and blanks before it
    std::size_t placed = 0;
    for (std::size_t i = 0; i < separator; ++i) {
      // Selection sampling (Knuth's algorithm S): every set of `count` positions is as likely.
      const auto left = static_cast<std::int64_t>(separator - i);
      if (rng.randint(0, left) < static_cast<std::int64_t>(count - placed)) {
        inputs[i] = inputs[separator + 1 + placed] = random_letter(rng);
        ++placed;
      } else {
        inputs[i] = kBlank;
      }
    }
    inputs[separator] = kSeparator;
    // As in Copy: from the separator on, each position predicts the next letter of the copy.
    for (std::size_t i = separator; i + 1 < inputs.size(); ++i) targets[i] = inputs[i + 1];
  }

 private:
  static std::vector<std::string> token_names() {
    std::vector<std::string> names;
    for (char letter = 'A'; letter <= 'Z'; ++letter) names.emplace_back(1, letter);
    // The blank and the separator; not "|", which would split a Markdown table's cell.
    names.insert(names.end(), {"_", "sep"});
    return names;
  }

  std::int64_t count_;
};

// The counting task of Golovneva et al. 2024 (CoPE): a program of `x =0`, `x ++` and `pass`
// statements, drawn with the paper's weights (set 1, pass 50, increment 7; values up to 10),
// then `print x`, whose answer is x's value. A statement is one or two tokens; the program
// fills the sequence, so a longer sequence is a longer program, mostly of more `pass`.
class Counting final : public NamedTokensTask {
 public:
  // Tokens: the values 0..10 first (a value's token is the value), the words, the variables.
  static constexpr std::int64_t kMaxValue = 10;
  static constexpr std::int64_t kSet = kMaxValue + 1, kIncrement = kSet + 1, kPass = kSet + 2,
                                kPrint = kSet + 3, kFirstVariable = kSet + 4;
  // Variables a..h: the vocabulary holds all eight whatever the option, so that a model
  // trained with fewer variables can be tested with more.
  static constexpr std::int64_t kMaxVariables = 8;
  // count_data_gen.py's OP_WEIGHTS: how often each statement is drawn.
  static constexpr std::int64_t kSetWeight = 1, kPassWeight = 50, kIncrementWeight = 7;

  explicit Counting(std::int64_t variables)
      : NamedTokensTask(token_names()), variables_(variables) {}
  std::string name() const override { return "counting"; }
  std::string description() const override {
    return "counting: statements x =0, x ++ and pass, then print x; predict x's value (vars=" +
           std::to_string(variables_) + ")";
  }
  std::int64_t min_length() const override { return 4; }  // x =0 print x

 protected:
  void fill(Tokens inputs, Tokens targets, ag::Rng& rng) const override {
    std::array<std::int64_t, kMaxVariables> value{};
    std::vector<std::int64_t> assigned;  // the variables set so far, in the order first set
    const std::size_t print = inputs.size() - 2;
    std::size_t i = 0;
    const auto set = [&](std::int64_t variable) {
      if (std::find(assigned.begin(), assigned.end(), variable) == assigned.end())
        assigned.push_back(variable);
      value[static_cast<std::size_t>(variable)] = 0;
      inputs[i++] = kFirstVariable + variable;
      inputs[i++] = kSet;
    };
    // The program starts with a set, so that print always has a variable to ask about (the
    // paper redraws a program that has none).
    set(rng.randint(0, variables_));
    while (i < print) {
      if (i + 1 == print) {  // no room for a two-token statement
        inputs[i++] = kPass;
        continue;
      }
      const std::int64_t draw = rng.randint(0, kSetWeight + kPassWeight + kIncrementWeight);
      if (draw < kSetWeight) {
        set(rng.randint(0, variables_));
      } else if (draw < kSetWeight + kPassWeight) {
        inputs[i++] = kPass;
      } else {
        const std::int64_t variable = pick(assigned, rng);
        auto& x = value[static_cast<std::size_t>(variable)];
        if (x == kMaxValue) continue;  // the paper redraws the statement
        ++x;
        inputs[i++] = kFirstVariable + variable;
        inputs[i++] = kIncrement;
      }
    }
    const std::int64_t asked = pick(assigned, rng);
    inputs[print] = kPrint;
    inputs[print + 1] = kFirstVariable + asked;
    targets[print + 1] = value[static_cast<std::size_t>(asked)];
  }

 private:
  static std::int64_t pick(const std::vector<std::int64_t>& from, ag::Rng& rng) {
    return from[static_cast<std::size_t>(rng.randint(0, static_cast<std::int64_t>(from.size())))];
  }
  static std::vector<std::string> token_names() {
    std::vector<std::string> names;
    for (std::int64_t v = 0; v <= kMaxValue; ++v) names.push_back(std::to_string(v));
    names.insert(names.end(), {"=0", "++", "pass", "print"});
    for (char x = 'a'; x < 'a' + kMaxVariables; ++x) names.emplace_back(1, x);
    return names;
  }

  std::int64_t variables_;
};

// A corpus becomes 8 bytes a character in memory: 64 MB of text is far past the book's
// corpora and still fits. read_file refuses a FIFO (it would block) and /dev/zero (endless).
constexpr std::uint64_t kMaxCorpusBytes = 64u << 20;

std::string read_whole_file(const std::string& path) {
  return ag::read_file(path, kMaxCorpusBytes, "charlm corpus file");
}

// A corpus byte as charlm spells it: whitespace and bytes outside printable ASCII get visible
// spellings.
std::string printable(unsigned char byte) {
  if (byte == '\n') return "\\n";
  if (byte == '\t') return "\\t";
  if (byte == '\r') return "\\r";
  if (byte == ' ') return "\u2423";  // ␣
  if (byte < 0x20 || byte >= 0x7F) {
    static constexpr char kHex[] = "0123456789ABCDEF";
    return std::string("\\x") + kHex[byte >> 4] + kHex[byte & 0xF];
  }
  return std::string(1, static_cast<char>(byte));
}

// FNV-1a 64 (the checkpoints' own checksum): enough to tell one text from another, not a
// defence against a crafted collision.
std::uint64_t fnv1a(const std::string& bytes) {
  std::uint64_t hash = 0xcbf29ce484222325ull;
  for (const char c : bytes) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3ull;
  }
  return hash;
}

class CharLM final : public SequenceTask {
 public:
  explicit CharLM(std::string path) : path_(std::move(path)) {
    const std::string text = read_whole_file(path_);
    ag::check(text.size() >= 2, "charlm", "corpus file '", path_, "' has ", text.size(),
              " characters; at least 2 are needed for one input and its target");
    build_vocabulary(text);
    source_ = {path_, std::string(bytes_.begin(), bytes_.end()), text.size(), fnv1a(text)};
  }
  std::string name() const override { return "charlm"; }
  std::string description() const override {
    return "charlm: next-character prediction on " + path_ + " (" + std::to_string(corpus_.size()) +
           " characters, " + std::to_string(vocab_size()) + " distinct)";
  }
  std::int64_t vocab_size() const override { return static_cast<std::int64_t>(bytes_.size()); }
  std::string token_text(std::int64_t token) const override {
    check_token(*this, token);
    return printable(bytes_[static_cast<std::size_t>(token)]);
  }
  std::optional<TaskSource> source() const override { return source_; }

 protected:
  void check_length_rules(std::int64_t length) const override {
    // A window holds the inputs plus one more character for the last target.
    ag::check(static_cast<std::size_t>(length) + 1 <= corpus_.size(), "length",
              "task charlm needs windows of ", length + 1, " characters (length ", length,
              " + 1) but corpus '", path_, "' has only ", corpus_.size());
  }
  void fill(Tokens inputs, Tokens targets, ag::Rng& rng) const override {
    const auto length = static_cast<std::int64_t>(inputs.size());
    const auto starts = static_cast<std::int64_t>(corpus_.size()) - length;
    const auto window = corpus_.begin() + rng.randint(0, starts);
    std::copy(window, window + length, inputs.begin());
    std::copy(window + 1, window + length + 1, targets.begin());
  }

 private:
  // Tokens are positions in the sorted list of the bytes that occur, so the vocabulary is as
  // small as the text allows and its order does not depend on where a byte first appears.
  void build_vocabulary(const std::string& text) {
    std::array<bool, 256> present{};
    for (char c : text) present[static_cast<unsigned char>(c)] = true;
    std::array<std::int64_t, 256> token_of{};
    for (std::size_t byte = 0; byte < present.size(); ++byte) {
      if (!present[byte]) continue;
      token_of[byte] = static_cast<std::int64_t>(bytes_.size());
      bytes_.push_back(static_cast<unsigned char>(byte));
    }
    corpus_.reserve(text.size());
    for (char c : text) corpus_.push_back(token_of[static_cast<unsigned char>(c)]);
  }

  std::string path_;
  std::vector<unsigned char> bytes_;  // token -> byte
  std::vector<std::int64_t> corpus_;  // the file as tokens
  TaskSource source_;
};

// An integer option with no upper bound but the one that keeps min_length() = k + 1 from
// overflowing.
constexpr std::int64_t kUnbounded = std::numeric_limits<std::int64_t>::max() - 1;

// The whole of `text` as an integer from low to high, or an ag::Error naming task and option.
std::int64_t integer_option(const std::string& text, const char* task, const char* key,
                            std::int64_t low, std::int64_t high) {
  std::int64_t value = 0;
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  const bool whole_integer = error == std::errc() && stop == end;
  const std::string range = high == kUnbounded
                                ? ">= " + std::to_string(low)
                                : "from " + std::to_string(low) + " to " + std::to_string(high);
  ag::check(whole_integer && value >= low && value <= high, "make_task", "task ", task, ": option ",
            key, " must be an integer ", range, ", got '", text, "'");
  return value;
}

// The whole of `text` as a probability p with 0 <= p < 1 (NaN fails both comparisons).
double probability_option(const std::string& text, const char* task, const char* key) {
  double p = 0;
  ag::check(ag::parse_double(text, p) && p >= 0 && p < 1, "make_task", "task ", task, ": option ",
            key, " must be a number p with 0 <= p < 1, got '", text, "'");
  return p;
}

std::string option_or(const TaskOptions& options, const std::string& key, std::string fallback) {
  const auto found = options.find(key);
  return found == options.end() ? fallback : found->second;
}

struct TaskEntry {
  std::string name;
  std::vector<std::string> option_keys;
  std::function<std::unique_ptr<Task>(const TaskOptions&)> make;
};

const std::vector<TaskEntry>& registry() {
  static const std::vector<TaskEntry> entries = {
      {"shiftk",
       {"k"},
       [](const TaskOptions& o) {
         return std::make_unique<ShiftK>(
             integer_option(option_or(o, "k", "4"), "shiftk", "k", 1, kUnbounded));
       }},
      {"alternating", {}, [](const TaskOptions&) { return std::make_unique<AlternatingChar>(); }},
      {"copy", {}, [](const TaskOptions&) { return std::make_unique<Copy>(); }},
      {"recall", {}, [](const TaskOptions&) { return std::make_unique<AssociativeRecall>(); }},
      {"flipflop",
       {"ignore"},
       [](const TaskOptions& o) {
         // The paper trains on FFL(0.8); its out-of-distribution sets are 0.98 and 0.1.
         return std::make_unique<FlipFlop>(
             probability_option(option_or(o, "ignore", "0.8"), "flipflop", "ignore"));
       }},
      {"selcopy",
       {"count"},
       [](const TaskOptions& o) {
         return std::make_unique<SelectiveCopy>(integer_option(
             option_or(o, "count", "8"), "selcopy", "count", 1, SelectiveCopy::kMaxCount));
       }},
      {"counting",
       {"vars"},
       [](const TaskOptions& o) {
         return std::make_unique<Counting>(integer_option(option_or(o, "vars", "3"), "counting",
                                                          "vars", 1, Counting::kMaxVariables));
       }},
      {"charlm",
       {"corpus"},
       [](const TaskOptions& o) {
         return std::make_unique<CharLM>(
             option_or(o, "corpus", "/usr/share/common-licenses/GPL-3"));
       }},
  };
  return entries;
}

std::string joined(const std::vector<std::string>& words) {
  if (words.empty()) return "none";
  std::string out;
  for (const auto& word : words) out += (out.empty() ? "" : ", ") + word;
  return out;
}

void check_option_keys(const TaskEntry& entry, const TaskOptions& options) {
  for (const auto& [key, value] : options) {
    const auto& keys = entry.option_keys;
    ag::check(std::find(keys.begin(), keys.end(), key) != keys.end(), "make_task", "task ",
              entry.name, " has no option '", key, "' (it accepts: ", joined(keys), ")");
  }
}

}  // namespace

std::unique_ptr<Task> make_task(const std::string& name, const TaskOptions& options) {
  const auto& entries = registry();
  const auto entry = std::find_if(entries.begin(), entries.end(),
                                  [&](const TaskEntry& e) { return e.name == name; });
  ag::check(entry != entries.end(), "make_task", "unknown task '", name,
            "'; known tasks: ", joined(task_names()));
  check_option_keys(*entry, options);
  return entry->make(options);
}

std::vector<std::string> task_names() {
  std::vector<std::string> names;
  for (const auto& entry : registry()) names.push_back(entry.name);
  return names;
}

namespace {

// The bytes of `from` that `other` lacks, spelled as charlm spells them and quoted: at most
// `shown` of them, then how many more.
std::string bytes_missing_from(const std::string& from, const std::string& other) {
  constexpr std::size_t shown = 8;
  std::string out;
  std::size_t count = 0;
  for (const char c : from) {
    if (other.find(c) != std::string::npos) continue;
    if (count++ < shown)
      out += (out.empty() ? "'" : ", '") + printable(static_cast<unsigned char>(c)) + "'";
  }
  if (count > shown) out += " and " + std::to_string(count - shown) + " more";
  return out;
}

}  // namespace

void check_same_source(const Task& task, const TaskSource& trained, SourceChange allowed,
                       const std::string& fix) {
  const std::optional<TaskSource> now = task.source();
  if (!now) return;
  if (now->characters != trained.characters) {
    const std::string added = bytes_missing_from(now->characters, trained.characters);
    const std::string gone = bytes_missing_from(trained.characters, now->characters);
    std::string what;
    if (!added.empty()) what += added + " new";
    if (!gone.empty()) what += (what.empty() ? "" : ", ") + gone + " missing";
    // The same file read again (resume, eval) or another one (a fine-tune's --init).
    const std::string changed =
        now->file == trained.file
            ? "has changed since the model was trained"
            : "is not the text the model was trained on ('" + trained.file + "')";
    throw ag::Error("charlm: the corpus '" + now->file + "' " + changed + ": " + what + " (" +
                    std::to_string(now->characters.size()) + " distinct characters, the model " +
                    "knows " + std::to_string(trained.characters.size()) +
                    "), so its tokens would stand for other characters; " + fix);
  }
  if (allowed == SourceChange::text_only) return;
  ag::check(now->text_bytes == trained.text_bytes && now->text_hash == trained.text_hash, "charlm",
            "the corpus '", now->file, "' has changed since the checkpoint was saved: the same ",
            now->characters.size(), " characters but another text (", now->text_bytes,
            " bytes, was ", trained.text_bytes,
            "), so training on would draw other windows and another held-out set; ", fix);
}

}  // namespace pe
