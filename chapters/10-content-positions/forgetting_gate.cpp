#include "chapters/10-content-positions/forgetting_gate.hpp"

#include <cmath>

namespace pe {

using ag::Tensor;

// [forgetting-bias]
Tensor forgetting_sums(const Tensor& log_f, const Tensor& before) {
  ag::check(log_f.dim() == 3, "fox", "expected log f [B, H, T], got ",
            ag::shape_string(log_f.shape()));
  // TASK 10.2 begin: the forgetting gate's running sums and bias
  const Tensor sums = ag::cumsum(log_f, -1);  // c_i = log f_0 + ... + log f_i
  return before.defined() ? ag::add(sums, before) : sums;
  // TASK 10.2 end
}

Tensor forgetting_bias(const Tensor& query_sums, const Tensor& key_sums) {
  ag::check(query_sums.dim() == 3 && key_sums.dim() == 3 &&
                query_sums.size(0) == key_sums.size(0) && query_sums.size(1) == key_sums.size(1),
            "fox", "expected running sums [B, H, Tq] and [B, H, Tk], got ",
            ag::shape_string(query_sums.shape()), " and ", ag::shape_string(key_sums.shape()));
  const std::int64_t B = query_sums.size(0), H = query_sums.size(1);
  // TASK 10.2 begin: the forgetting gate's running sums and bias
  // D_ij = c_i - c_j = log f_{j+1} + ... + log f_i (0 on the diagonal)
  return ag::sub(ag::reshape(query_sums, {B, H, query_sums.size(2), 1}),
                 ag::reshape(key_sums, {B, H, 1, key_sums.size(2)}));
  // TASK 10.2 end
}
// [forgetting-bias]

ForgettingGatePositions::ForgettingGatePositions(std::int64_t width, std::int64_t heads,
                                                 double bias_init, ag::Rng& rng, ag::Dtype dtype)
    : gate(width, heads, rng, true, dtype) {
  ag::check(std::isfinite(bias_init), "fox", "bias_init must be a finite number, got ", bias_init);
  gate.bias.copy_from(ag::full({heads}, bias_init, ag::Dtype::f64));
  register_module("gate", gate);
}

// [forgetting-hook]
Tensor ForgettingGatePositions::log_forget(const Tensor& x) const {
  ag::check(x.dim() == 3 && x.size(2) == gate.weight.size(0), "fox", "expected x [B, T, ",
            gate.weight.size(0), "], got ", ag::shape_string(x.shape()));
  // TASK 10.2 begin: the forgetting gate's running sums and bias
  // log sigmoid, not log(sigmoid): a gate far below 0 gives log f = its value, not log(0)
  return ag::permute(ag::log_sigmoid(gate.forward(x)), {0, 2, 1});  // [B, H, T]
  // TASK 10.2 end
}

Tensor ForgettingGatePositions::content_bias(const Tensor& scores, const Tensor& x,
                                             const Positions& queries, CacheSlot* cached) const {
  (void)queries;  // the decay counts gates, not positions
  const Tensor log_f = log_forget(x);
  ag::check(scores.dim() == 4 && scores.size(1) == log_f.size(1) && scores.size(2) == log_f.size(2),
            "fox", "expected scores [B, ", log_f.size(1), ", ", log_f.size(2), ", Tk], got ",
            ag::shape_string(scores.shape()));
  const bool continues = cached && cached->tensor.defined();
  // With a cache, the new tokens' sums continue from the last cached one.
  const Tensor before =
      continues ? ag::slice(cached->tensor, 2, -1, cached->tensor.size(2)) : Tensor();
  const Tensor query_sums = forgetting_sums(log_f, before);
  const Tensor key_sums = continues ? ag::concat({cached->tensor, query_sums}, 2) : query_sums;
  ag::check(key_sums.size(2) == scores.size(3), "fox", "the scores have ", scores.size(3),
            " keys but the gate has seen ", key_sums.size(2), " tokens");
  if (cached) cached->tensor = key_sums.detach();
  return ag::add(scores, forgetting_bias(query_sums, key_sums));
}
// [forgetting-hook]

ForgettingGateEncoding::ForgettingGateEncoding(std::int64_t width, std::int64_t heads,
                                               double bias_init, ag::Dtype dtype)
    : width_(width), heads_(heads), bias_init_(bias_init), dtype_(dtype) {
  ag::check(width >= 1 && heads >= 1, "fox", "needs a width and heads of at least 1, got ", width,
            " and ", heads);
  ag::check(std::isfinite(bias_init), "fox", "bias_init must be a finite number, got ", bias_init);
}

std::shared_ptr<AttentionPositions> ForgettingGateEncoding::make_attention_part(
    ag::Rng& rng) const {
  return std::make_shared<ForgettingGatePositions>(width_, heads_, bias_init_, rng, dtype_);
}

std::vector<std::pair<std::string, Tensor>> ForgettingGateEncoding::inspect(
    std::int64_t length) const {
  ag::NoGradGuard no_grad;
  // -log sigmoid(b) = log(1 + e^-b), the slope of a gate whose w . x is 0
  const double slope = std::log1p(std::exp(-bias_init_));
  const Tensor log_f = ag::full({1, heads_, length}, -slope, ag::Dtype::f64);
  const Tensor sums = forgetting_sums(log_f);
  return {{"slope", ag::full({heads_}, slope, ag::Dtype::f64)},
          {"bias", ag::reshape(forgetting_bias(sums, sums), {heads_, length, length})}};
}

}  // namespace pe
