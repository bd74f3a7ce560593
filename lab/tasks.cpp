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

#include "ag/error.hpp"
#include "ag/files.hpp"

namespace pe {

Batch Task::held_out(std::int64_t count, std::int64_t length, std::uint64_t seed) const {
  // A fork depends only on the seed and the stream, so this set is the same however much
  // training has drawn, and training (on other streams) never draws it.
  ag::Rng rng = ag::Rng(seed).fork(kHeldOutStream);
  return sample(count, length, rng);
}

std::string Task::token_text(std::int64_t token) const {
  ag::check(token >= 0 && token < vocab_size(), "token_text", "token ", token,
            " is outside the vocabulary [0, ", vocab_size(), ") of task ", name());
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
    ag::check(length >= min_length(), "sample", "task ", name(),
              " cannot make sequences of length ", length, ": the minimum is ", min_length());
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
  /// Task-specific length rules beyond min_length (parity, an upper limit, ...).
  virtual void check_length(std::int64_t /*length*/) const {}
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
  void check_length(std::int64_t length) const override {
    ag::check(length % 2 == 0, "sample", "task copy needs an even length, got ", length);
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
  void check_length(std::int64_t length) const override {
    ag::check(length % 2 == 1, "sample", "task recall needs an odd length (pairs + query), got ",
              length);
    ag::check(length <= kMaxLength, "sample", "task recall allows at most ", kMaxLength,
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

// A corpus becomes 8 bytes a character in memory: 64 MB of text is far past the book's
// corpora and still fits. read_file refuses a FIFO (it would block) and /dev/zero (endless).
constexpr std::uint64_t kMaxCorpusBytes = 64u << 20;

std::string read_whole_file(const std::string& path) {
  return ag::read_file(path, kMaxCorpusBytes, "charlm corpus file");
}

class CharLM final : public SequenceTask {
 public:
  explicit CharLM(std::string path) : path_(std::move(path)) {
    const std::string text = read_whole_file(path_);
    ag::check(text.size() >= 2, "charlm", "corpus file '", path_, "' has ", text.size(),
              " characters; at least 2 are needed for one input and its target");
    build_vocabulary(text);
  }
  std::string name() const override { return "charlm"; }
  std::string description() const override {
    return "charlm: next-character prediction on " + path_ + " (" + std::to_string(corpus_.size()) +
           " characters, " + std::to_string(vocab_size()) + " distinct)";
  }
  std::int64_t vocab_size() const override { return static_cast<std::int64_t>(bytes_.size()); }
  std::string token_text(std::int64_t token) const override {
    ag::check(token >= 0 && token < vocab_size(), "token_text", "token ", token,
              " is outside the vocabulary [0, ", vocab_size(), ") of task charlm");
    return printable(bytes_[static_cast<std::size_t>(token)]);
  }

 protected:
  void check_length(std::int64_t length) const override {
    // A window holds the inputs plus one more character for the last target.
    ag::check(static_cast<std::size_t>(length) + 1 <= corpus_.size(), "sample",
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

  // Whitespace and bytes outside printable ASCII get visible spellings.
  static std::string printable(unsigned char byte) {
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

  std::string path_;
  std::vector<unsigned char> bytes_;  // token -> byte
  std::vector<std::int64_t> corpus_;  // the file as tokens
};

std::int64_t parse_shift(const std::string& text) {
  std::int64_t k = 0;
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, k);
  const bool whole_integer = error == std::errc() && stop == end;
  // The upper bound keeps min_length() = k + 1 from overflowing.
  ag::check(whole_integer && k >= 1 && k < std::numeric_limits<std::int64_t>::max(), "make_task",
            "task shiftk: option k must be an integer >= 1, got '", text, "'");
  return k;
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
         return std::make_unique<ShiftK>(parse_shift(option_or(o, "k", "4")));
       }},
      {"alternating", {}, [](const TaskOptions&) { return std::make_unique<AlternatingChar>(); }},
      {"copy", {}, [](const TaskOptions&) { return std::make_unique<Copy>(); }},
      {"recall", {}, [](const TaskOptions&) { return std::make_unique<AssociativeRecall>(); }},
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

}  // namespace pe
