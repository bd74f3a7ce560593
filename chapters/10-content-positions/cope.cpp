#include "chapters/10-content-positions/cope.hpp"

#include <cmath>

#include "chapters/01-attention/attention.hpp"

namespace pe {

using ag::Tensor;

// [cope-positions]
Tensor cope_gates(const Tensor& scores, const Positions& q_positions) {
  ag::check(scores.dim() == 4, "cope", "expected scores [B, H, Tq, Tk], got ",
            ag::shape_string(scores.shape()));
  // TASK 10.1 begin: CoPE's gates and positions
  const Tensor hidden = causal_mask(scores.size(2), scores.size(3), q_positions, scores.dtype());
  return ag::masked_fill(ag::sigmoid(scores), hidden, 0.0);
  // TASK 10.1 end
}

Tensor cope_positions(const Tensor& gates) {
  // TASK 10.1 begin: CoPE's gates and positions
  // p_ij = g_ij + g_i,j+1 + ... + g_ii: summed from the query's end of the row towards key j
  return ag::cumsum(gates, -1, /*reverse=*/true);
  // TASK 10.1 end
}
// [cope-positions]

// [cope-logits]
Tensor cope_position_logits(const Tensor& q, const Tensor& embeddings, const Tensor& positions) {
  ag::check(q.dim() == 4 && embeddings.dim() == 2 && embeddings.size(1) == q.size(3), "cope",
            "expected q [B, H, Tq, D] and embeddings [P, D], got ", ag::shape_string(q.shape()),
            " and ", ag::shape_string(embeddings.shape()));
  // The integer trick: q_i . e[t] for every integer t is one product [B, H, Tq, P]; a position
  // between t and t+1 interpolates those two logits, which equals the logit of the interpolated
  // vector because the dot product is linear.
  // TASK 10.1 begin: CoPE's gates and positions
  const Tensor integer_logits = ag::matmul_transposed(q, embeddings);  // [B, H, Tq, P]
  const Tensor logits = ag::gather_interpolated(integer_logits, positions);
  return ag::mul(logits, 1.0 / std::sqrt(double(q.size(3))));
  // TASK 10.1 end
}
// [cope-logits]

CopePositions::CopePositions(std::int64_t positions, std::int64_t head_width, ag::Dtype dtype) {
  ag::check(positions >= 2 && head_width >= 1, "cope",
            "needs at least 2 positions and a head width of at least 1, got ", positions, " and ",
            head_width);
  embeddings = ag::zeros({positions, head_width}, dtype);
  register_parameter("embeddings", embeddings);
}

Tensor CopePositions::bias(const Tensor& scores, const Tensor& q, const Tensor& k,
                           const Positions& queries) const {
  (void)k;  // the gates read q . k through the scores
  ag::check(q.dim() == 4 && q.size(3) == embeddings.size(1), "cope", "expected q [B, H, Tq, ",
            embeddings.size(1), "], got ", ag::shape_string(q.shape()));
  const Tensor positions = cope_positions(cope_gates(scores, queries));
  return ag::add(scores, cope_position_logits(q, embeddings, positions));
}

CopeEncoding::CopeEncoding(std::int64_t positions, std::int64_t head_width, ag::Dtype dtype)
    : positions_(positions), head_width_(head_width), dtype_(dtype) {
  ag::check(positions >= 2 && head_width >= 1, "cope",
            "needs at least 2 positions and a head width of at least 1, got ", positions, " and ",
            head_width);
}

std::shared_ptr<AttentionPositions> CopeEncoding::make_attention_part(ag::Rng& rng) const {
  (void)rng;  // the table starts at 0
  return std::make_shared<CopePositions>(positions_, head_width_, dtype_);
}

std::vector<std::pair<std::string, Tensor>> CopeEncoding::inspect(std::int64_t length) const {
  ag::NoGradGuard no_grad;
  // Every gate open: scores so large that sigmoid rounds to 1 in float64.
  const Tensor open = ag::full({1, 1, length, length}, 100.0, ag::Dtype::f64);
  const Tensor count = cope_positions(cope_gates(open, 0));
  return {{"count", ag::reshape(count, {length, length})}};
}

}  // namespace pe
