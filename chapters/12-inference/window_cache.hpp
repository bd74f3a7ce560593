// A key/value cache that keeps the first S tokens (the attention sinks) and the last W tokens
// of a stream, so that a model decodes past its training length in constant memory
// (StreamingLLM, Xiao et al. 2024). The kept keys sit either at their places in the cache
// (StreamingLLM's choice: positions 0 .. S+W-1, keys rotated again at every step) or at their
// original positions in the stream.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "chapters/01-attention/decoder.hpp"

namespace pe {

/// Which positions the kept tokens have when a window cache has evicted others.
enum class StreamPositions {
  cache,     ///< their places in the cache, 0 .. n-1 (StreamingLLM)
  original,  ///< their positions in the stream (the sinks 0 .. S-1, the window t-W+1 .. t)
};

/// "cache" or "original"; anything else is an ag::Error that lists both.
StreamPositions parse_stream_positions(const std::string& text);
/// The name parse_stream_positions reads.
std::string stream_positions_name(StreamPositions positions);

/// What a window cache keeps.
struct WindowOptions {
  std::int64_t sinks = 0;   ///< S: the first S tokens, never evicted
  std::int64_t window = 0;  ///< W: the last W tokens (the new one included); 0: keep everything
  StreamPositions positions = StreamPositions::cache;  ///< where the kept keys sit
};

/// The largest S + W a window cache accepts: a bound against typing mistakes, far above any
/// cache of the book.
inline constexpr std::int64_t kLargestWindowCache = 1'000'000;

/// Checks options (S >= 0, W >= 0, S > 0 only with a window, and S + W within
/// kLargestWindowCache); an ag::Error naming the option otherwise.
void check_window_options(const WindowOptions& options);

/// Which of the `held` tokens (oldest first, the newest just appended) a cache with these
/// options drops now: the indices, ascending, of the oldest tokens after the first S, as many
/// as are held beyond S + W. None with W = 0 (keep everything).
std::vector<std::int64_t> window_evictions(std::int64_t held, const WindowOptions& options);

/// The positions the encoding's bias, content_bias and values hooks see for the newest token
/// (the query) over the kept keys, whose stream positions are `held` (sorted, the newest last):
/// in `original` mode the query at its stream position held.back() and the keys at `held`
/// (Positions::with_keys), in `cache` mode the query at n-1 and the keys at 0 .. n-1.
Positions window_hook_positions(const std::vector<std::int64_t>& held, StreamPositions positions);

/// Decoding one token at a time through a cache that keeps at most S + W tokens. Every layer
/// keeps, for each kept token, its key (unrotated in `cache` mode, so that it can be rotated
/// again at its new place), its value and its position in the stream; the encoding's hooks
/// see the kept keys' positions (Positions::with_keys in `original` mode). With W = 0 (or
/// before anything is evicted) the logits are those of the plain KVCache.
///
/// Some encodings cannot be served once tokens are evicted, and the first eviction refuses them
/// with an ag::Error naming the encoding and the mode: in `cache` mode an encoding that adds
/// positions to the token embeddings (sinusoidal, learned: a kept token's key carries the
/// position it was fed at, which cannot move); in `original` mode with W = 1 an encoding that
/// continues a per-token state from the previous token (the forgetting gate); and an encoding
/// with per-token state the cache does not know.
class WindowCache {
 public:
  /// For a model of batch 1. The model must outlive the cache.
  WindowCache(Decoder& model, WindowOptions options);

  /// Feeds the next token of the stream; returns the logits of the token after it, [V].
  /// A token outside the vocabulary, or one the model or the cache refuses (an ag::Error),
  /// leaves the cache as it was before the call.
  ag::Tensor step(std::int64_t token);
  /// Tokens fed so far (the stream position of the next one).
  std::int64_t fed() const;
  /// The stream positions of the tokens held now, sorted (at most S + W of them).
  std::vector<std::int64_t> held_positions() const;
  /// What the cache keeps and where its keys sit, as it was built with.
  const WindowOptions& options() const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

/// The loss of every prediction of a stream read through a window cache: bits[t] =
/// -log2 p(tokens[t+1] | what the cache holds after tokens[0..t]), for t = 0 .. n-2.
/// Fewer than 2 tokens is an ag::Error.
std::vector<double> stream_bits(Decoder& model, const std::vector<std::int64_t>& tokens,
                                const WindowOptions& options);

}  // namespace pe
