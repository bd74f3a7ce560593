#include "chapters/10-content-positions/content_probe.hpp"

#include <cmath>
#include <limits>

#include "chapters/10-content-positions/cope.hpp"
#include "chapters/10-content-positions/forgetting_gate.hpp"

namespace pe {

using ag::Tensor;

namespace {

const SelfAttention& attention_of(const Decoder& model, std::int64_t layer) {
  ag::check(layer >= 0 && layer < std::int64_t(model.blocks.size()), "content probe", "layer ",
            layer, " of a model with ", model.blocks.size(), " layers");
  return model.blocks[std::size_t(layer)]->attention;
}

// sums[h][v] / counts[h][v], NaN where nothing was counted
std::vector<std::vector<double>> means(const std::vector<std::vector<double>>& sums,
                                       const std::vector<std::vector<double>>& counts) {
  std::vector<std::vector<double>> out = sums;
  for (std::size_t h = 0; h < out.size(); ++h)
    for (std::size_t v = 0; v < out[h].size(); ++v)
      out[h][v] =
          counts[h][v] > 0 ? sums[h][v] / counts[h][v] : std::numeric_limits<double>::quiet_NaN();
  return out;
}

// ids.values[n] as an index into a vocabulary of `vocab` tokens (an ag::Error outside it)
std::size_t token_at(const ag::Indices& ids, std::int64_t n, std::int64_t vocab) {
  const std::int64_t v = ids.values[std::size_t(n)];
  ag::check(v >= 0 && v < vocab, "content probe", "token ", v, " outside the vocabulary [0, ",
            vocab, ")");
  return std::size_t(v);
}

}  // namespace

Tensor attention_input(Decoder& model, const ag::Indices& ids, std::int64_t layer) {
  attention_of(model, layer);  // checks the layer
  ag::NoGradGuard no_grad;
  Tensor x = layer == 0 ? model.encoding->embed(model.tokens.forward(ids), 0)
                        : model.hidden_states(ids)[std::size_t(layer - 1)];
  return model.blocks[std::size_t(layer)]->norm1.forward(x);
}

Tensor cope_gates_of(Decoder& model, const ag::Indices& ids, std::int64_t layer) {
  const SelfAttention& attention = attention_of(model, layer);
  ag::check(dynamic_cast<const CopePositions*>(attention.positions.get()) != nullptr,
            "content probe", "layer ", layer, " has no CoPE part");
  const Tensor x = attention_input(model, ids, layer);
  ag::NoGradGuard no_grad;
  const Tensor q = split_heads(attention.query.forward(x), attention.heads);
  const Tensor k = split_heads(attention.key.forward(x), attention.heads);
  const Tensor scores =
      ag::mul(ag::matmul_transposed(q, k), 1.0 / std::sqrt(double(attention.head_width)));
  return cope_gates(scores, 0);
}

Tensor forget_logs_of(Decoder& model, const ag::Indices& ids, std::int64_t layer) {
  const auto* part =
      dynamic_cast<const ForgettingGatePositions*>(attention_of(model, layer).positions.get());
  ag::check(part != nullptr, "content probe", "layer ", layer, " has no forgetting gate");
  const Tensor x = attention_input(model, ids, layer);
  ag::NoGradGuard no_grad;
  return part->log_forget(x);
}

std::vector<std::vector<double>> mean_gate_by_key_token(const Tensor& gates, const ag::Indices& ids,
                                                        std::int64_t vocab) {
  ag::check(gates.dim() == 4 && ids.shape.size() == 2 && gates.size(0) == ids.shape[0] &&
                gates.size(2) == ids.shape[1] && gates.size(3) == ids.shape[1],
            "content probe", "expected gates [B, H, T, T] for ids [B, T], got ",
            ag::shape_string(gates.shape()), " and ", ag::shape_string(ids.shape));
  const std::int64_t B = gates.size(0), H = gates.size(1), T = gates.size(2);
  const std::vector<double> g = gates.to_vector();
  std::vector<std::vector<double>> sums(static_cast<std::size_t>(H),
                                        std::vector<double>(static_cast<std::size_t>(vocab)));
  auto counts = sums;
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t h = 0; h < H; ++h)
      for (std::int64_t i = 0; i < T; ++i)
        for (std::int64_t j = 0; j <= i; ++j) {
          const auto v = token_at(ids, b * T + j, vocab);
          sums[std::size_t(h)][v] += g[std::size_t(((b * H + h) * T + i) * T + j)];
          counts[std::size_t(h)][v] += 1;
        }
  return means(sums, counts);
}

std::vector<std::vector<double>> mean_keep_by_token(const Tensor& log_f, const ag::Indices& ids,
                                                    std::int64_t vocab) {
  ag::check(log_f.dim() == 3 && ids.shape.size() == 2 && log_f.size(0) == ids.shape[0] &&
                log_f.size(2) == ids.shape[1],
            "content probe", "expected log f [B, H, T] for ids [B, T], got ",
            ag::shape_string(log_f.shape()), " and ", ag::shape_string(ids.shape));
  const std::int64_t B = log_f.size(0), H = log_f.size(1), T = log_f.size(2);
  const std::vector<double> values = log_f.to_vector();
  std::vector<std::vector<double>> sums(static_cast<std::size_t>(H),
                                        std::vector<double>(static_cast<std::size_t>(vocab)));
  auto counts = sums;
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t h = 0; h < H; ++h)
      for (std::int64_t t = 0; t < T; ++t) {
        const auto v = token_at(ids, b * T + t, vocab);
        sums[std::size_t(h)][v] += std::exp(values[std::size_t((b * H + h) * T + t)]);
        counts[std::size_t(h)][v] += 1;
      }
  return means(sums, counts);
}

}  // namespace pe
