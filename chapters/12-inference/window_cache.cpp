#include "chapters/12-inference/window_cache.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "ag/functional.hpp"
#include "chapters/10-content-positions/forgetting_gate.hpp"

namespace pe {

using ag::Tensor;

StreamPositions parse_stream_positions(const std::string& text) {
  if (text == "cache") return StreamPositions::cache;
  if (text == "original") return StreamPositions::original;
  throw ag::Error("window cache: positions must be 'cache' or 'original', got '" + text + "'");
}

std::string stream_positions_name(StreamPositions positions) {
  return positions == StreamPositions::cache ? "cache" : "original";
}

void check_window_options(const WindowOptions& options) {
  ag::check(options.sinks >= 0, "window cache", "sinks must be 0 or more, got ", options.sinks);
  ag::check(options.window >= 0, "window cache", "window must be 0 (keep everything) or more, got ",
            options.window);
  ag::check(options.sinks == 0 || options.window > 0, "window cache", "sinks ", options.sinks,
            " need a window (window 0 keeps every token, so there is nothing to sink)");
  ag::check(options.sinks + options.window <= kLargestWindowCache, "window cache",
            "sinks + window must be at most ", kLargestWindowCache, ", got ",
            options.sinks + options.window);
}

// [window-evictions]
std::vector<std::int64_t> window_evictions(std::int64_t held, const WindowOptions& options) {
  check_window_options(options);
  ag::check(held >= 0, "window cache", "held tokens must be 0 or more, got ", held);
  std::vector<std::int64_t> evicted;
  // TASK 12.1 begin: which tokens the cache keeps
  // the first S are the sinks; beyond S + W, the oldest of the others goes
  if (options.window == 0) return evicted;
  for (std::int64_t i = options.sinks;
       held - std::int64_t(evicted.size()) > options.sinks + options.window; ++i)
    evicted.push_back(i);
  // TASK 12.1 end
  return evicted;
}
// [window-evictions]

// [window-positions]
Positions window_hook_positions(const std::vector<std::int64_t>& held, StreamPositions positions) {
  ag::check(!held.empty(), "window cache", "no token is held");
  ag::check(positions == StreamPositions::cache || positions == StreamPositions::original,
            "window cache", "positions must be cache or original, got ", int(positions));
  // TASK 12.2 begin: where the kept keys sit
  const auto n = static_cast<std::int64_t>(held.size());
  if (positions == StreamPositions::cache) return Positions(n - 1);  // keys 0 .. n-1
  return Positions::with_keys(held.back(), held);
  // TASK 12.2 end
}
// [window-positions]

namespace {

// x without entry `index` of `axis`.
Tensor drop_index(const Tensor& x, std::int64_t axis, std::int64_t index) {
  const std::int64_t n = x.size(axis);
  if (n == 1) return Tensor();
  if (index == 0) return ag::slice(x, axis, 1, n);
  if (index == n - 1) return ag::slice(x, axis, 0, n - 1);
  return ag::concat({ag::slice(x, axis, 0, index), ag::slice(x, axis, index + 1, n)}, axis);
}

Tensor append(const Tensor& held, const Tensor& x) {
  return held.defined() ? ag::concat({held, x}, 2) : x;
}

// What one layer keeps per held token.
struct HeldLayer {
  Tensor keys;    // [1, H, n, D']: rotated at their stream positions (original) or not (cache)
  Tensor values;  // [1, H, n, D]
  CacheSlot encoding;
};

}  // namespace

struct WindowCache::Impl {
  Decoder* model;
  WindowOptions options;
  std::int64_t fed = 0;
  std::vector<std::int64_t> held;  // stream positions, sorted
  std::vector<HeldLayer> layers;
  bool adds_to_embeddings = false;  // an absolute encoding (its embed hook changes x)

  // An ag::Error when evicting would give this model wrong logits (see the header).
  void check_can_evict(const std::vector<std::int64_t>& evicted) const;
  // Drops token `index` from a layer; the forgetting gate's running sums are renumbered in
  // cache mode.
  void evict(HeldLayer& layer, std::int64_t index) const;
  Tensor attend(DecoderBlock& block, HeldLayer& layer, const Tensor& x) const;
};

void WindowCache::Impl::check_can_evict(const std::vector<std::int64_t>& evicted) const {
  if (evicted.empty()) return;
  const std::string name = model->encoding->name();
  const std::string mode = stream_positions_name(options.positions);
  ag::check(!(adds_to_embeddings && options.positions == StreamPositions::cache), "window cache",
            "encoding '", name, "' adds positions to the token embeddings, which cannot move when ",
            "the cache evicts (positions=", mode, "); use positions=original");
  for (std::size_t l = 0; l < layers.size(); ++l) {
    if (!layers[l].encoding.tensor.defined()) continue;
    const bool gate =
        dynamic_cast<const ForgettingGatePositions*>(model->blocks[l]->attention.positions.get());
    ag::check(gate, "window cache", "encoding '", name, "' keeps per-token state in layer ", l,
              " that the window cache does not know how to evict (positions=", mode, ")");
    // the gate's next running sum continues from the previous token's, which W = 1 evicts
    ag::check(options.positions == StreamPositions::cache || options.window >= 2, "window cache",
              "encoding '", name, "' continues its running sum from the previous token, so ",
              "positions=", mode, " needs a window of at least 2, got ", options.window);
  }
}

// The forgetting gate keeps c_j = log f of every token up to j. In original mode the kept sums
// stay the stream's (the evicted tokens' gates still decay what came before them); in cache
// mode the kept tokens sit next to each other, as if the evicted ones had never come, so the
// sums after the evicted token lose its log f = c_e - c_(e-1).
void WindowCache::Impl::evict(HeldLayer& layer, std::int64_t index) const {
  layer.keys = drop_index(layer.keys, 2, index);
  layer.values = drop_index(layer.values, 2, index);
  Tensor& sums = layer.encoding.tensor;
  if (!sums.defined()) return;
  if (options.positions == StreamPositions::cache && index + 1 < sums.size(2)) {
    const std::int64_t n = sums.size(2);
    Tensor gate = ag::slice(sums, 2, index, index + 1);
    if (index > 0) gate = ag::sub(gate, ag::slice(sums, 2, index - 1, index));
    const Tensor later = ag::sub(ag::slice(sums, 2, index + 1, n), gate);
    sums = ag::concat({ag::slice(sums, 2, 0, index + 1), later}, 2);
  }
  sums = drop_index(sums, 2, index);
}

// One attention layer for the newest token, x [1, 1, C] (after norm1), over the held keys.
Tensor WindowCache::Impl::attend(DecoderBlock& block, HeldLayer& layer, const Tensor& x) const {
  SelfAttention& attention = block.attention;
  const AttentionPositions& part = *attention.positions;
  Tensor q = split_heads(attention.query.forward(x), attention.heads);  // [1, H, 1, D]
  Tensor k = split_heads(attention.key.forward(x), attention.heads);
  const Tensor v = split_heads(attention.value.forward(x), attention.heads);
  const Positions at = window_hook_positions(held, options.positions);
  Tensor keys;  // the held keys as the scores see them
  // TASK 12.2 begin: where the kept keys sit
  if (options.positions == StreamPositions::original) {
    // rotated once, at the stream position where the token came
    std::tie(q, k) = part.rotate(q, k, Positions(held.back()));
    layer.keys = append(layer.keys, k);
    keys = layer.keys;
  } else {
    // kept unrotated and turned again at every step to their places 0 .. n-1. Safe because
    // every registered rotate treats q and k apart: RoPE and xPos turn (and scale) each by its
    // own positions, with tables sized by positions.end(T), n both times; PoPE gives the key
    // alone its phase bias (and 2D-wide keys, which a PoPE query matches); hybrid scales the
    // query alone by its temperature at its position. So .second of rotate(k, k, 0) is the
    // keys of a pass at 0 .. n-1, and .first of rotate(q, q, n-1) its last query.
    layer.keys = append(layer.keys, k);
    keys = part.rotate(layer.keys, layer.keys, Positions(0)).second;
    const auto n = static_cast<std::int64_t>(held.size());
    q = part.rotate(q, q, Positions(n - 1)).first;
  }
  // TASK 12.2 end
  layer.values = append(layer.values, v);
  // one query at or after every held key: the causal mask hides nothing
  Tensor scores =
      ag::mul(ag::matmul_transposed(q, keys), 1.0 / std::sqrt(double(attention.head_width)));
  scores = part.bias(scores, q, keys, at);
  scores = part.content_bias(scores, x, at, &layer.encoding);
  const Tensor weights = softmax_with_sinks(scores, attention.sink_logits);
  const Tensor out = part.values(ag::matmul(weights, layer.values), weights, at);
  return attention.output.forward(merge_heads(out));
}

WindowCache::WindowCache(Decoder& model, WindowOptions options) : impl_(std::make_shared<Impl>()) {
  check_window_options(options);
  impl_->model = &model;
  impl_->options = options;
  impl_->layers.resize(model.blocks.size());
  ag::NoGradGuard no_grad;
  // an absolute encoding changes the embeddings; the rest return x as it came
  const Tensor zero = ag::zeros({1, 1, model.config.width}, model.tokens.weight.dtype());
  impl_->adds_to_embeddings =
      ag::max(ag::abs(ag::reshape(model.encoding->embed(zero, 0), {-1})), 0).item() > 0;
}

Tensor WindowCache::step(std::int64_t token) {
  Impl& m = *impl_;
  Decoder& model = *m.model;
  ag::check(token >= 0 && token < model.config.vocab, "window cache", "token ", token,
            " is outside the vocabulary 0 .. ", model.config.vocab - 1);
  ag::NoGradGuard no_grad;
  Tensor x;
  // every change below replaces a handle, so the state before the step comes back whole when
  // the model refuses the token (a position past a learned table, a refused eviction)
  const std::vector<std::int64_t> held_before = m.held;
  const std::vector<HeldLayer> layers_before = m.layers;
  try {
    m.held.push_back(m.fed);
    const std::vector<std::int64_t> evicted =
        window_evictions(static_cast<std::int64_t>(m.held.size()), m.options);
    m.check_can_evict(evicted);
    for (auto it = evicted.rbegin(); it != evicted.rend(); ++it) {
      m.held.erase(m.held.begin() + *it);
      for (HeldLayer& layer : m.layers) m.evict(layer, *it);
    }
    const std::int64_t place = m.options.positions == StreamPositions::cache
                                   ? static_cast<std::int64_t>(m.held.size()) - 1
                                   : m.held.back();
    x = model.encoding->embed(model.tokens.forward({{token}, {1, 1}}), place);  // [1, 1, C]
    for (std::size_t l = 0; l < model.blocks.size(); ++l) {
      DecoderBlock& block = *model.blocks[l];
      x = block.feed_forward(ag::add(x, m.attend(block, m.layers[l], block.norm1.forward(x))));
    }
  } catch (...) {
    m.held = held_before;
    m.layers = layers_before;
    throw;
  }
  ++m.fed;
  return ag::reshape(model.head.forward(model.final_norm.forward(x)), {model.config.vocab});
}

std::int64_t WindowCache::fed() const { return impl_->fed; }

std::vector<std::int64_t> WindowCache::held_positions() const { return impl_->held; }

const WindowOptions& WindowCache::options() const { return impl_->options; }

std::vector<double> stream_bits(Decoder& model, const std::vector<std::int64_t>& tokens,
                                const WindowOptions& options) {
  ag::check(tokens.size() >= 2, "stream_bits", "needs at least 2 tokens, got ", tokens.size());
  WindowCache cache(model, options);
  std::vector<double> bits;
  bits.reserve(tokens.size() - 1);
  for (std::size_t t = 0; t + 1 < tokens.size(); ++t) {
    const std::int64_t next = tokens[t + 1];
    ag::check(next >= 0 && next < model.config.vocab, "stream_bits", "token ", next,
              " is outside the vocabulary 0 .. ", model.config.vocab - 1);
    const std::vector<double> log_p = ag::log_softmax(cache.step(tokens[t])).to_vector();
    bits.push_back(-log_p[static_cast<std::size_t>(next)] / std::log(2.0));
  }
  return bits;
}

}  // namespace pe
