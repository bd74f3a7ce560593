// Chapter 11: layers that differ. A local layer never looks past its window and a chunked one
// never out of its chunk, in a full pass and one token at a time through the cache; Llama 4's
// temperature follows its formula and scales q, not k; the pattern cycles over the layers; a
// part's gradients in float64; a small hybrid model trains; and its options are refused
// when they are wrong.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ag/gradcheck.hpp"
#include "chapters/01-attention/decoder.hpp"
#include "chapters/01-attention/encoding_registry.hpp"
#include "chapters/01-attention/permutation.hpp"
#include "chapters/01-attention/tests/model_check.hpp"
#include "chapters/08-length/tests/tiny_length_config.hpp"
#include "chapters/11-todays-models/layer_types.hpp"
#include "chapters/11-todays-models/todays_models.hpp"
#include "lab/chapter_registry.hpp"
#include "lab/trainer.hpp"

using namespace pe;
using ag::Tensor;

namespace {

constexpr auto f64 = ag::Dtype::f64;
using Options = std::map<std::string, std::string>;

// "hybrid" from the registry for the small test decoder (width 16, 2 heads of 8), `layers` deep.
std::shared_ptr<HybridEncoding> make_hybrid(Options options, std::int64_t layers = 2) {
  register_ch11_encodings();
  EncodingSpec spec;
  spec.model = small_decoder_config();
  spec.model.layers = layers;
  spec.options = std::move(options);
  ag::Rng rng(1);
  return std::dynamic_pointer_cast<HybridEncoding>(make_encoding("hybrid", spec, rng));
}

std::string refusal(Options options) {
  try {
    make_hybrid(std::move(options));
  } catch (const ag::Error& e) {
    return e.what();
  }
  return "";
}

// The small decoder around a hybrid encoding, in float64.
std::unique_ptr<Decoder> small_model(Options options, std::uint64_t seed = 2) {
  ag::Rng rng(seed);
  auto model =
      std::make_unique<Decoder>(small_decoder_config(), make_hybrid(std::move(options)), rng);
  model->to(f64);
  return model;
}

const ag::Indices kSequences{{1, 4, 2, 6, 0, 3, 8, 5, 7, 2, 1, 4, 3, 6, 0, 5, 8, 7, 2, 4}, {2, 10}};
constexpr std::int64_t kLength = 10;

// Whether query i may see key j of a layer with this span (besides the causal mask).
bool within(const AttentionSpan& span, std::int64_t i, std::int64_t j) {
  if (span.window > 0 && i - j >= span.window) return false;
  if (span.chunk > 0 && i / span.chunk != j / span.chunk) return false;
  return true;
}

// Every layer of `model` gives exactly 0 weight to the keys outside its span and a positive
// weight to the others up to the query, in a full pass and in cached decoding one token at a
// time, whose logits equal the full pass's.
void expect_span_kept(Decoder& model, const AttentionSpan& span) {
  ag::NoGradGuard no_grad;
  model.capture_attention(true);
  const Tensor full = model.forward(kSequences);
  const std::vector<Tensor> weights = model.attention_weights();
  ASSERT_EQ(weights.size(), 2u);
  for (std::size_t l = 0; l < weights.size(); ++l)
    for (std::int64_t b = 0; b < 2; ++b)
      for (std::int64_t h = 0; h < 2; ++h)
        for (std::int64_t i = 0; i < kLength; ++i)
          for (std::int64_t j = 0; j <= i; ++j) {
            const double w = weights[l].at({b, h, i, j});
            if (within(span, i, j)) {
              EXPECT_GT(w, 0.0) << "layer " << l << ", query " << i << ", key " << j;
            } else {
              EXPECT_EQ(w, 0.0) << "layer " << l << ", query " << i << ", key " << j;
            }
          }
  KVCache cache;
  for (std::int64_t t = 0; t < kLength; ++t) {
    std::vector<std::int64_t> ids;
    for (std::int64_t b = 0; b < 2; ++b) ids.push_back(kSequences.values[b * kLength + t]);
    const Tensor step = model.forward({ids, {2, 1}}, t, &cache);
    EXPECT_LT(max_abs_difference(step, ag::slice(full, 1, t, t + 1)), 1e-12) << "step " << t;
    for (const Tensor& row : model.attention_weights()) {
      ASSERT_EQ(row.shape(), (ag::Shape{2, 2, 1, t + 1}));
      for (std::int64_t b = 0; b < 2; ++b)
        for (std::int64_t h = 0; h < 2; ++h)
          for (std::int64_t j = 0; j <= t; ++j)
            if (!within(span, t, j)) {
              EXPECT_EQ(row.at({b, h, 0, j}), 0.0) << "step " << t << ", key " << j;
            }
    }
  }
  EXPECT_EQ(cache.length(), kLength);
  model.capture_attention(false);
}

}  // namespace

// --- the spans ----------------------------------------------------------------------------------

TEST(Ch11Layers, ALocalLayerNeverAttendsPastItsWindow) {
  auto model = small_model({{"pattern", "local"}, {"window", "3"}});
  expect_span_kept(*model, {3, 0});
  // and the cached decoding of the shared check, one by one and in chunks
  const auto difference = cached_decoding_difference(*model);
  EXPECT_LT(difference.one_by_one, 1e-12);
  EXPECT_LT(difference.chunks, 1e-12);
}

TEST(Ch11Layers, AChunkedLayerAttendsOnlyWithinItsChunk) {
  auto model = small_model({{"pattern", "chunked"}, {"chunk", "4"}});
  expect_span_kept(*model, {0, 4});
  const auto difference = cached_decoding_difference(*model);
  EXPECT_LT(difference.one_by_one, 1e-12);
  EXPECT_LT(difference.chunks, 1e-12);
}

TEST(Ch11Layers, AWindowOfOneLeavesEachTokenItselfWithoutNaN) {
  // The first token of every chunk, and every token under a window of 1, sees only itself:
  // its row of scores is all -infinity but one, and the softmax gives exactly 1 there.
  for (const Options& options : std::vector<Options>{{{"pattern", "local"}, {"window", "1"}},
                                                     {{"pattern", "chunked"}, {"chunk", "1"}}}) {
    auto model = small_model(options);
    model->capture_attention(true);
    const Tensor logits = model->forward(kSequences);
    for (double v : logits.to_vector()) ASSERT_TRUE(std::isfinite(v));
    for (const Tensor& w : model->attention_weights())
      for (std::int64_t i = 0; i < kLength; ++i) EXPECT_EQ(w.at({1, 1, i, i}), 1.0) << i;
  }
}

TEST(Ch11Layers, GlobalAndNopeLayersSeeEveryEarlierKey) {
  auto model = small_model({{"pattern", "global+nope"}});
  expect_span_kept(*model, {0, 0});
}

// --- the temperature ----------------------------------------------------------------------------

TEST(Ch11Layers, TheTemperatureFollowsLlama4sFormula) {
  // tau(p) = 1 + attn_scale * ln(1 + floor((p + 1) / F)), exactly 1 below p = F - 1
  for (std::int64_t p = 0; p < 8191; p += 7) EXPECT_EQ(query_temperature(p, 8192, 0.1), 1.0) << p;
  EXPECT_EQ(query_temperature(8190, 8192, 0.1), 1.0);
  EXPECT_DOUBLE_EQ(query_temperature(8191, 8192, 0.1), 1 + 0.1 * std::log(2.0));
  EXPECT_DOUBLE_EQ(query_temperature(16382, 8192, 0.1), 1 + 0.1 * std::log(2.0));
  EXPECT_DOUBLE_EQ(query_temperature(16383, 8192, 0.1), 1 + 0.1 * std::log(3.0));
  EXPECT_DOUBLE_EQ(query_temperature(131071, 8192, 0.1), 1 + 0.1 * std::log(17.0));
  for (std::int64_t p = 0; p < 40; ++p)
    EXPECT_NEAR(query_temperature(p, 4, 0.25),
                1 + 0.25 * std::log(1 + std::floor((double(p) + 1) / 4)), 1e-15)
        << p;
  EXPECT_EQ(query_temperature(100, 4, 0.0), 1.0);
  EXPECT_THROW(query_temperature(-1, 4, 0.1), ag::Error);
  EXPECT_THROW(query_temperature(0, 0, 0.1), ag::Error);
  EXPECT_THROW(query_temperature(0, 4, -0.1), ag::Error);
  // inspect shows it per position, and per layer where it acts
  const auto seen =
      make_hybrid(
          {{"pattern", "global+nope"}, {"temperature_floor", "4"}, {"temperature_scale", "0.25"}})
          ->inspect(12);
  std::map<std::string, Tensor> by_name(seen.begin(), seen.end());
  for (std::int64_t p = 0; p < 12; ++p) {
    EXPECT_EQ(by_name.at("temperature").at({p}), query_temperature(p, 4, 0.25));
    EXPECT_EQ(by_name.at("layer1.temperature").at({p}), query_temperature(p, 4, 0.25));
    EXPECT_EQ(by_name.at("layer0.temperature").at({p}), 1.0);  // a RoPE layer: none
  }
}

TEST(Ch11Layers, TheTemperatureScalesQueriesNotKeys) {
  // A NoPE layer with F = 2 at queries 3 .. 6 (a cache of three before them): q times tau(p)
  // row by row, k exactly as it came.
  ag::Rng rng(3);
  const Tensor q = ag::randn({2, 2, 4, 8}, rng, f64), k = ag::randn({2, 2, 4, 8}, rng, f64);
  HybridOptions o;
  o.pattern = {LayerKind::global, LayerKind::nope};
  o.temperature_floor = 2;
  o.temperature_scale = 0.5;
  const HybridLayerPositions nope(8, layer_plan(o, 1));
  const auto [q_nope, k_nope] = nope.rotate(q, k, 3);
  EXPECT_EQ(k_nope.to_vector(), k.to_vector());
  for (std::int64_t i = 0; i < 4; ++i) {
    const double tau = query_temperature(3 + i, 2, 0.5);
    EXPECT_GT(tau, 1.0);
    for (std::int64_t d = 0; d < 8; ++d)
      EXPECT_EQ(q_nope.at({1, 0, i, d}), q.at({1, 0, i, d}) * tau) << i << "," << d;
  }
  // the RoPE layer of the same model has no temperature: chapter 5's rotation alone
  const HybridLayerPositions rope_layer(8, layer_plan(o, 0));
  const RotaryPositions rope(8);
  const auto [q_rope, k_rope] = rope_layer.rotate(q, k, 3);
  const auto [q_chapter5, k_chapter5] = rope.rotate(q, k, 3);
  EXPECT_EQ(q_rope.to_vector(), q_chapter5.to_vector());
  EXPECT_EQ(k_rope.to_vector(), k_chapter5.to_vector());
  // temperature_on=all: the RoPE layer scales its rotated queries too, after the rotation
  o.temperature_on = TemperatureOn::all;
  const auto [q_all, k_all] = HybridLayerPositions(8, layer_plan(o, 0)).rotate(q, k, 3);
  EXPECT_EQ(k_all.to_vector(), k_chapter5.to_vector());
  for (std::int64_t i = 0; i < 4; ++i)
    EXPECT_EQ(q_all.at({0, 1, i, 5}),
              q_chapter5.at({0, 1, i, 5}) * query_temperature(3 + i, 2, 0.5));
  // below F - 1 every query keeps its scale: the tensor is passed through
  o.temperature_floor = 100;
  const auto [q_low, k_low] = HybridLayerPositions(8, layer_plan(o, 1)).rotate(q, k, 3);
  EXPECT_EQ(q_low.to_vector(), q.to_vector());
}

TEST(Ch11Layers, CachedDecodingWithTheTemperatureMatchesTheFullPass) {
  // NoPE layers whose temperature changes within the sequence (F = 2), and a local layer with
  // the temperature too: the cached steps scale each query at its own absolute position.
  for (const std::string on : {"nope", "all"}) {
    auto model = small_model({{"pattern", "local+nope"},
                              {"window", "2"},
                              {"temperature_floor", "2"},
                              {"temperature_scale", "0.5"},
                              {"temperature_on", on}});
    const auto difference = cached_decoding_difference(*model);
    EXPECT_LT(difference.one_by_one, 1e-12) << on;
    EXPECT_LT(difference.chunks, 1e-12) << on;
  }
}

// --- the pattern --------------------------------------------------------------------------------

TEST(Ch11Layers, ThePatternCyclesOverTheLayers) {
  EXPECT_EQ(layer_pattern_name(layer_pattern_from("local+local+global")), "local+local+global");
  ag::Rng rng(4);
  DecoderConfig config = small_decoder_config();
  config.layers = 4;
  const auto encoding = make_hybrid({{"pattern", "local+chunked+nope"},
                                     {"window", "3"},
                                     {"chunk", "5"},
                                     {"local_base", "100"},
                                     {"global_base", "1000000"}},
                                    4);
  Decoder model(config, encoding, rng);
  const std::vector<LayerKind> expected{LayerKind::local, LayerKind::chunked, LayerKind::nope,
                                        LayerKind::local};
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const auto part =
        std::dynamic_pointer_cast<HybridLayerPositions>(model.blocks[i]->attention.positions);
    ASSERT_TRUE(part) << i;
    EXPECT_EQ(part->plan().kind, expected[i]) << i;
  }
  const auto plan = [&](std::size_t i) {
    return std::dynamic_pointer_cast<HybridLayerPositions>(model.blocks[i]->attention.positions)
        ->plan();
  };
  EXPECT_EQ(plan(0).span.window, 3);
  EXPECT_EQ(plan(0).base, 100.0);
  EXPECT_EQ(plan(1).span.chunk, 5);
  EXPECT_EQ(plan(1).base, 1e6);
  EXPECT_EQ(plan(2).base, 0.0);  // no rotation
  // Gemma 3's five local layers and one global over 12 layers: layers 5 and 11 are global
  HybridOptions gemma;
  gemma.pattern = layer_pattern_from("local+local+local+local+local+global");
  gemma.window = 1024;
  gemma.global_base = 1e6;
  for (std::int64_t i = 0; i < 12; ++i)
    EXPECT_EQ(layer_plan(gemma, i).kind, i % 6 == 5 ? LayerKind::global : LayerKind::local) << i;
  // inspect: each layer's kind, span and base, here for the model's four layers
  const auto seen = encoding->inspect(3);
  std::map<std::string, Tensor> by_name(seen.begin(), seen.end());
  EXPECT_EQ(by_name.at("layer3.kind").at({0}), double(LayerKind::local));
  EXPECT_EQ(by_name.at("layer3.window").at({0}), 3.0);
  EXPECT_EQ(by_name.at("layer1.chunk").at({0}), 5.0);
  EXPECT_EQ(by_name.at("layer1.base").at({0}), 1e6);
  EXPECT_EQ(by_name.at("layer2.kind").at({0}), double(LayerKind::nope));
  EXPECT_EQ(by_name.count("layer4.kind"), 0u);
}

TEST(Ch11Layers, TheDefaultIsLlama4sPatternBelowItsChunk) {
  // No option: three RoPE layers with full attention and a NoPE layer, no temperature, so that
  // `pe table --part 2` trains it as it trains every encoding, with its defaults.
  const auto encoding = make_hybrid({}, 4);
  EXPECT_EQ(layer_pattern_name(encoding->options().pattern), "global+global+global+nope");
  EXPECT_EQ(encoding->options().temperature_floor, 0);
  EXPECT_EQ(encoding->options().global_base, 10000.0);
  // a one-layer model's inspect still shows the pattern's four layers
  const auto seen = make_hybrid({}, 1)->inspect(2);
  EXPECT_EQ(seen.size(), 4u * 5 + 1);
}

// --- gradients ----------------------------------------------------------------------------------

TEST(Ch11Layers, APartsRotateAndBiasPassGradcheckInFloat64) {
  // The attention weights softmax(bias(scale q' k'^T) + causal mask) of each kind of layer, with
  // respect to q and k, through RoPE, the temperature (F = 2, so that it changes along the
  // sequence) and the -infinity of the span.
  const std::int64_t T = 6, D = 4;
  ag::Rng rng(5);
  const Tensor q = ag::randn({1, 2, T, D}, rng, f64), k = ag::randn({1, 2, T, D}, rng, f64);
  HybridOptions o;
  o.pattern = layer_pattern_from("local+chunked+global+nope");
  o.window = 2;
  o.chunk = 4;
  o.temperature_floor = 2;
  o.temperature_scale = 0.5;
  o.temperature_on = TemperatureOn::all;
  for (std::int64_t layer = 0; layer < 4; ++layer) {
    const auto part = std::make_shared<HybridLayerPositions>(D, layer_plan(o, layer));
    const auto result = ag::gradcheck(
        [&part](const std::vector<Tensor>& in) {
          const auto [q_turned, k_turned] = part->rotate(in[0], in[1], 0);
          Tensor scores = ag::mul(ag::matmul_transposed(q_turned, k_turned), 0.5);
          scores = part->bias(scores, q_turned, k_turned, 0);
          scores = ag::masked_fill(scores, causal_mask(T, T, 0, f64),
                                   -std::numeric_limits<double>::infinity());
          return ag::softmax(scores);
        },
        {q, k});
    EXPECT_TRUE(result.passed) << layer_kind_name(part->plan().kind) << ": " << result.report;
    EXPECT_GT(result.checks, 90) << layer;
  }
}

TEST(Ch11Layers, OneBlockModelPassesGradcheckInFloat64) {
  ag::Rng rng(6);
  const auto result = gradcheck_one_block(make_hybrid({{"pattern", "local"},
                                                       {"window", "2"},
                                                       {"temperature_floor", "1"},
                                                       {"temperature_on", "all"}}),
                                          rng);
  EXPECT_TRUE(result.passed) << result.report;
  EXPECT_GT(result.checks, 100);
}

// --- training -----------------------------------------------------------------------------------

TEST(Ch11Layers, AHybridModelTrainsAndItsLossFalls) {
  // Four layers, one of each kind, NoPE with Llama 4's temperature at a small F, through the
  // lab's trainer as `pe train --encoding hybrid` trains it: 150 steps of ShiftK at length 8,
  // a fraction of a second.
  register_chapter_encodings();
  TrainConfig c = tiny_length_config("hybrid");
  c.encoding_options = {{"pattern", "local+chunked+global+nope"},
                        {"window", "3"},
                        {"chunk", "4"},
                        {"temperature_floor", "4"}};
  c.model.layers = 4;
  c.steps = 150;
  c.warmup = 2;
  c.lr = 1e-2;
  c.eval_every = 150;
  Trainer trainer(c);
  const double first = trainer.step();
  double last = first;
  for (std::int64_t s = 1; s < c.steps; ++s) last = trainer.step();
  EXPECT_TRUE(std::isfinite(last));
  // from about ln 26 = 3.26 (a uniform guess of the letter) to well below half of it
  EXPECT_LT(last, 0.5 * first) << "from " << first << " to " << last;
}

// --- options ------------------------------------------------------------------------------------

TEST(Ch11Layers, RegisteredWithItsOptions) {
  register_ch11_encodings();
  bool found = false;
  for (const auto& entry : registered_encodings())
    if (entry.name == "hybrid") {
      found = true;
      EXPECT_EQ(entry.chapter, "11");
      EXPECT_EQ(
          entry.option_names,
          (std::vector<std::string>{"pattern", "window", "chunk", "local_base", "global_base",
                                    "temperature_floor", "temperature_scale", "temperature_on"}));
    }
  EXPECT_TRUE(found);
  const auto all = make_hybrid({{"pattern", "local+global+nope"},
                                {"window", "16"},
                                {"global_base", "1e6"},
                                {"temperature_floor", "8192"},
                                {"temperature_scale", "0.2"},
                                {"temperature_on", "all"}});
  EXPECT_EQ(all->options().window, 16);
  EXPECT_EQ(all->options().local_base, 10000.0);
  EXPECT_EQ(all->options().global_base, 1e6);
  EXPECT_EQ(all->options().temperature_floor, 8192);
  EXPECT_EQ(all->options().temperature_scale, 0.2);
  EXPECT_EQ(all->options().temperature_on, TemperatureOn::all);
}

TEST(Ch11Layers, BadOptionsAreRefusedInOneLine) {
  const auto says = [](Options options, const std::string& what) {
    const std::string message = refusal(options);
    EXPECT_NE(message.find(what), std::string::npos)
        << "'" << message << "' lacks '" << what << "'";
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  };
  says({{"pattern", "local+sliding"}, {"window", "4"}}, "unknown layer kind 'sliding'");
  says({{"pattern", "local+sliding"}, {"window", "4"}}, "local, global, chunked, nope");
  says({{"pattern", "local++global"}, {"window", "4"}}, "empty layer kind");
  says({{"pattern", ""}}, "empty layer kind");
  says({{"pattern", "local+global"}}, "needs option window");
  says({{"pattern", "chunked"}}, "needs option chunk");
  says({{"pattern", "local"}, {"window", "0"}}, "window must be a whole number from 1");
  says({{"pattern", "local"}, {"window", "2.5"}}, "window");
  says({{"pattern", "chunked"}, {"chunk", "0"}}, "chunk must be a whole number from 1");
  says({{"pattern", "chunked"}, {"chunk", "-3"}}, "chunk");
  says({{"pattern", "global"}, {"global_base", "1"}}, "greater than 1");
  says({{"pattern", "global"}, {"global_base", "ten"}}, "global_base");
  says({{"pattern", "nope"}, {"temperature_floor", "8"}, {"temperature_scale", "-0.1"}},
       "temperature_scale must be 0 or more");
  says({{"pattern", "nope"}, {"temperature_floor", "-1"}}, "temperature_floor");
  says({{"pattern", "nope"}, {"temperature_floor", "8"}, {"temperature_on", "some"}},
       "temperature_on must be nope or all, got 'some'");
  // an option that no layer of the pattern uses
  says({{"pattern", "global+nope"}, {"window", "4"}}, "option window is for local layers");
  says({{"pattern", "global"}, {"local_base", "100"}}, "option local_base is for local layers");
  says({{"pattern", "local"}, {"window", "4"}, {"chunk", "8"}}, "option chunk is for chunked");
  says({{"pattern", "nope"}, {"global_base", "1e6"}}, "option global_base");
  says({{"pattern", "nope"}, {"temperature_scale", "0.2"}}, "option temperature_scale is for");
  says({{"pattern", "nope"}, {"temperature_on", "all"}}, "option temperature_on is for");
  says({{"pattern", "global"}, {"temperature_floor", "8"}}, "has none (temperature_on=all");
  // and an option that hybrid does not know at all, by the registry
  says({{"base", "500000"}}, "has no option 'base'");
  // RoPE's layers need an even head width
  register_ch11_encodings();
  EncodingSpec odd;
  odd.model = small_decoder_config();
  odd.model.width = 6;
  odd.model.heads = 2;
  ag::Rng rng(1);
  EXPECT_THROW(make_encoding("hybrid", odd, rng), ag::Error);
  odd.options = {{"pattern", "nope"}};
  EXPECT_NO_THROW(make_encoding("hybrid", odd, rng));
}
