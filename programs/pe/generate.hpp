// `pe generate`: a character language model writes text, one token at a time, through the
// key/value cache of chapter 1 (or, to check it, with a full pass per token).
#pragma once
#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "chapters/01-attention/decoder.hpp"
#include "lab/tasks.hpp"

namespace pe {

/// What `pe generate` writes after its prompt, and how it picks each token.
struct GenerateOptions {
  std::int64_t tokens = 0;  ///< new tokens to write after the prompt
  double temperature = 0;   ///< 0: greedy (the most likely token); > 0: sample softmax(logits / T)
  std::uint64_t seed = 1;   ///< the sampling stream
  bool cache = true;        ///< through the KVCache; false: the whole sequence again per token
  /// > 0: through chapter 12's window cache instead, which keeps the first `sinks` tokens and
  /// the last `window` (StreamingLLM), its kept keys at `positions` ("cache" or "original").
  std::int64_t window = 0;
  std::int64_t sinks = 0;           ///< S, with a window
  std::string positions = "cache";  ///< where the window cache's kept keys sit
};

/// The prompt's tokens followed by options.tokens new ones. Before writing anything, checks
/// that the model can run at the last position it will be fed (prompt + tokens - 2; with a
/// window in cache mode, at most S + W - 1): a learned table too short for it is an ag::Error
/// naming the table's length. A window with cache = false, or sinks or positions other than
/// the defaults without a window, is an ag::Error naming the option.
std::vector<std::int64_t> generate_tokens(Decoder& model, const std::vector<std::int64_t>& prompt,
                                          const GenerateOptions& options);

/// The charlm task's tokens of a text; a byte outside the task's vocabulary is an ag::Error
/// naming it and its place in the text.
std::vector<std::int64_t> encode_text(const Task& task, const std::string& text);
/// The text of charlm tokens (the bytes themselves, not token_text's visible spellings).
std::string decode_tokens(const Task& task, const std::vector<std::int64_t>& tokens);

/// pe generate CHECKPOINT --prompt TEXT --tokens N [--temperature T --seed S] [--no-cache]
/// [--window W [--sinks S] [--positions cache|original]] [-o key=value]
void add_generate_command(CLI::App& app);

}  // namespace pe
