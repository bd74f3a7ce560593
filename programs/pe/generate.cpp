#include "programs/pe/generate.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <iostream>
#include <memory>
#include <optional>

#include "base/command_line.hpp"
#include "base/option_files.hpp"
#include "lab/memory.hpp"
#include "lab/trainer.hpp"
#include "programs/pe/commands.hpp"
#if PE_HAS_CHAPTER_12
#include "chapters/12-inference/window_cache.hpp"
#endif

namespace pe {

namespace {

constexpr std::int64_t kMostTokens = 100000;  // a bound against typing mistakes

// token -> byte for every token of the task's vocabulary: the characters of its corpus, in
// token order (Task::source, the list a checkpoint keeps; Trainer::load has checked that the
// corpus read again still has them).
std::vector<unsigned char> bytes_of_tokens(const Task& task) {
  const std::optional<TaskSource> source = task.source();
  ag::check(source.has_value(), "generate", "task ", task.name(),
            " has no characters to write: pe generate needs a charlm model");
  return {source->characters.begin(), source->characters.end()};
}

// The next token from the logits of the last position: the first largest one, or a draw
// from softmax(logits / temperature).
std::int64_t pick(const std::vector<double>& logits, const GenerateOptions& options, ag::Rng& rng) {
  std::size_t best = 0;
  for (std::size_t i = 1; i < logits.size(); ++i)
    if (logits[i] > logits[best]) best = i;
  if (options.temperature == 0) return std::int64_t(best);
  std::vector<double> weights(logits.size());
  double total = 0;
  for (std::size_t i = 0; i < logits.size(); ++i)  // exp((l - max) / T): no overflow
    total += weights[i] = std::exp((logits[i] - logits[best]) / options.temperature);
  double u = rng.uniform() * total;
  for (std::size_t i = 0; i < weights.size(); ++i) {
    if (u < weights[i]) return std::int64_t(i);
    u -= weights[i];
  }
  return std::int64_t(best);  // u landed on the rounding of the sum
}

// The logits of the last position of logits [1, T, V].
std::vector<double> last_row(const ag::Tensor& logits) {
  const std::vector<double> all = logits.to_vector();
  const std::int64_t V = logits.size(-1);
  return {all.end() - V, all.end()};
}

}  // namespace

std::vector<std::int64_t> generate_tokens(Decoder& model, const std::vector<std::int64_t>& prompt,
                                          const GenerateOptions& options) {
  ag::check(!prompt.empty(), "generate", "the prompt is empty: give at least one character");
  ag::check(options.tokens >= 1 && options.tokens <= kMostTokens, "generate",
            "--tokens must be from 1 to ", kMostTokens, ", got ", options.tokens);
  ag::check(std::isfinite(options.temperature) && options.temperature >= 0, "generate",
            "--temperature must be 0 (greedy) or a positive number, got ", options.temperature);
  for (std::int64_t id : prompt)
    ag::check(id >= 0 && id < model.config.vocab, "generate", "token ", id,
              " is outside the model's vocabulary of ", model.config.vocab);
  ag::check(options.window >= 0, "generate", "--window must be 0 or more, got ", options.window);
  ag::check(options.window == 0 || options.cache, "generate",
            "--window decodes through the window cache, so it cannot go with --no-cache");
  ag::check(options.window > 0 || (options.sinks == 0 && options.positions == "cache"), "generate",
            "--sinks and --positions choose what the window cache keeps: they need --window");
  ag::NoGradGuard no_grad;
  const auto prompt_length = std::int64_t(prompt.size());
  // The last token written is never fed back: the model reads positions up to P + N - 2.
  std::int64_t last = prompt_length + options.tokens - 2;
#if PE_HAS_CHAPTER_12
  WindowOptions window{options.sinks, options.window, StreamPositions::cache};
  if (options.window > 0) {
    window.positions = parse_stream_positions(options.positions);
    check_window_options(window);
    // in cache mode the kept keys sit at 0 .. S+W-1 however long the text grows
    if (window.positions == StreamPositions::cache)
      last = std::min(last, options.sinks + options.window - 1);
  }
#else
  ag::check(options.window == 0, "generate", "--window needs chapter 12's window cache, ",
            "which this build lacks");
#endif
  try {
    // one token there: cheap, and it fails as the run would
    model.forward({{prompt[0]}, {1, 1}}, last);
  } catch (const ag::Error& e) {
    throw ag::Error("generate: a prompt of " + std::to_string(prompt_length) + " tokens and " +
                    std::to_string(options.tokens) + " new ones reach position " +
                    std::to_string(last) + ", which this model cannot run (" + e.what() + ")");
  }
  ag::Rng rng(options.seed);
  std::vector<std::int64_t> ids = prompt;
#if PE_HAS_CHAPTER_12
  if (options.window > 0) {  // a token at a time, from the first, through the window cache
    WindowCache stream(model, window);
    ag::Tensor next;
    for (std::int64_t id : prompt) next = stream.step(id);
    for (std::int64_t n = 0; n < options.tokens; ++n) {
      ids.push_back(pick(next.to_vector(), options, rng));
      if (n + 1 < options.tokens) next = stream.step(ids.back());
    }
    return ids;
  }
#endif
  KVCache cache;
  ag::Tensor logits =
      model.forward({prompt, {1, prompt_length}}, 0, options.cache ? &cache : nullptr);
  for (std::int64_t n = 0; n < options.tokens; ++n) {
    ids.push_back(pick(last_row(logits), options, rng));
    if (n + 1 == options.tokens) break;
    if (options.cache)  // only the new token, at the position after the cached ones
      logits = model.forward({{ids.back()}, {1, 1}}, cache.length(), &cache);
    else
      logits = model.forward({ids, {1, std::int64_t(ids.size())}});
  }
  return ids;
}

std::vector<std::int64_t> encode_text(const Task& task, const std::string& text) {
  std::array<std::int64_t, 256> token_of;
  token_of.fill(-1);
  const std::vector<unsigned char> bytes = bytes_of_tokens(task);
  for (std::size_t t = 0; t < bytes.size(); ++t) token_of[bytes[t]] = std::int64_t(t);
  std::vector<std::int64_t> tokens;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (token_of[byte] >= 0) {
      tokens.push_back(token_of[byte]);
      continue;
    }
    static constexpr char kHex[] = "0123456789ABCDEF";
    const std::string shown = byte >= 0x20 && byte < 0x7F
                                  ? std::string("'") + char(byte) + "'"
                                  : std::string("byte 0x") + kHex[byte >> 4] + kHex[byte & 0xF];
    throw ag::Error("generate: the prompt's character " + shown + " at index " + std::to_string(i) +
                    " is not in the model's vocabulary (the " + std::to_string(bytes.size()) +
                    " characters of its training corpus)");
  }
  return tokens;
}

std::string decode_tokens(const Task& task, const std::vector<std::int64_t>& tokens) {
  const std::vector<unsigned char> bytes = bytes_of_tokens(task);
  std::string text;
  for (std::int64_t t : tokens) {
    ag::check(t >= 0 && t < std::int64_t(bytes.size()), "generate", "token ", t,
              " is outside the vocabulary of ", bytes.size());
    text += char(bytes[std::size_t(t)]);
  }
  return text;
}

void add_generate_command(CLI::App& app) {
  struct Flags {
    std::string checkpoint, prompt;
    GenerateOptions options;
    bool no_cache = false;
    std::vector<std::string> encoding_options;
  };
  auto flags = std::make_shared<Flags>();
  auto* cmd = app.add_subcommand("generate", "text from a charlm model, a token at a time");
  cmd->add_option("checkpoint", flags->checkpoint, "checkpoint.agt of a charlm run")
      ->required()
      ->check(existing_file());
  cmd->add_option("--prompt,-p", flags->prompt, "the text to continue")->required();
  cmd->add_option("--tokens,-n", flags->options.tokens, "characters to write")
      ->required()
      ->check(whole_number<std::int64_t>(1, kMostTokens));
  cmd->add_option("--temperature", flags->options.temperature,
                  "0: the most likely character each time; above 0: sample")
      ->capture_default_str()
      ->check(real_number(0));
  cmd->add_option("--seed", flags->options.seed, "the sampling stream")
      ->capture_default_str()
      ->check(whole_number<std::uint64_t>(0));
  cmd->add_flag("--no-cache", flags->no_cache,
                "a full pass over the whole text per character instead of the key/value cache");
  auto* window =
      cmd->add_option("--window", flags->options.window,
                      "decode through chapter 12's window cache, which keeps the last W tokens "
                      "(and the --sinks first ones): constant memory past the training length")
          ->check(whole_number<std::int64_t>(1, 1000000));
  auto* sinks =
      cmd->add_option("--sinks", flags->options.sinks,
                      "with --window: the first S tokens, never evicted (attention sinks)")
          ->check(whole_number<std::int64_t>(0, 1000000));
  auto* positions =
      cmd->add_option("--positions", flags->options.positions,
                      "with --window: where the kept keys sit, cache (their places 0 .. S+W-1, "
                      "StreamingLLM) or original (their positions in the text)")
          ->check(CLI::IsMember({"cache", "original"}));
  cmd->add_option("--option,-o", flags->encoding_options,
                  "encoding option key=value replacing the checkpoint's (as in pe eval)");
  cmd->callback([flags, window, sinks, positions] {
    ag::check(!(window->count() > 0 && flags->no_cache), "generate",
              "--window decodes through the window cache, so it cannot go with --no-cache");
    ag::check(window->count() > 0 || (sinks->count() == 0 && positions->count() == 0), "generate",
              "--sinks and --positions choose what the window cache keeps: they need --window");
    auto trainer =
        Trainer::load(flags->checkpoint, parse_pairs(flags->encoding_options, "--option"));
    ag::check(trainer->config().task == "charlm", "generate", "'", flags->checkpoint,
              "' is a model of task ", trainer->config().task,
              "; pe generate needs a charlm checkpoint");
    GenerateOptions options = flags->options;
    options.cache = !flags->no_cache;
    // Dynamic NTK turns every key by the scale of the whole current length; cached keys keep
    // the scale of their own step, so past train_length the cache would read stale keys.
    const auto& encoding_options = trainer->config().encoding_options;
    const auto scaling = encoding_options.find("scaling");
    ag::check(!options.cache || trainer->config().encoding != "rope" ||
                  (options.window > 0 && options.positions == "cache") ||
                  scaling == encoding_options.end() || scaling->second != "dynamic",
              "generate", "scaling=dynamic changes the angle of every cached key as the text ",
              "grows, so the key/value cache cannot hold them: add --no-cache");
    const std::vector<std::int64_t> prompt = encode_text(trainer->task(), flags->prompt);
    ag::check(options.tokens >= 1 && options.tokens <= kMostTokens, "generate",
              "--tokens must be from 1 to ", kMostTokens, ", got ", options.tokens);
    // decoding through the cache holds [T, C] per layer, not a full pass's [T, T] scores
    const GenerationPlan plan{std::int64_t(prompt.size()), options.tokens, options.cache,
                              options.window, options.sinks};
    require_memory(
        estimated_generation_bytes(trainer->config(), trainer->config().model.vocab, plan),
        "generating " + std::to_string(options.tokens) + " characters after a prompt of " +
            std::to_string(prompt.size()));
    const auto ids = generate_tokens(trainer->model(), prompt, options);
    std::cout << decode_tokens(trainer->task(), ids) << "\n";
  });
}

}  // namespace pe
