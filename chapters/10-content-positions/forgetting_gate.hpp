// The forgetting gate (Lin, Nikishin, He and Courville, "Forgetting Transformer: Softmax
// Attention with a Forget Gate", ICLR 2025; x-transformers' DataDependentAlibi). Every token t
// decides, from its own content, how much of the past each head keeps:
//   f_t = sigmoid(w_h . x_t + b_h)          one number in (0, 1) per head and token,
// and the logit of query i for key j gains the log of everything forgotten in between,
//   D_ij = sum over l = j+1 .. i of log f_l = c_i - c_j,  c_i = sum over l <= i of log f_l.
// With the same f at every token, D_ij = (i - j) log f: ALiBi with slope -log f. The gate makes
// ALiBi's fixed decay a decay that the content chooses.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "chapters/01-attention/positional_encoding.hpp"

namespace pe {

/// The running sums c_i = sum over l <= i of log f_l, continued from `before` (c of the token
/// before the first, [B, H, 1]; undefined to start at 0). log_f [B, H, T] -> [B, H, T]
ag::Tensor forgetting_sums(const ag::Tensor& log_f, const ag::Tensor& before = {});

/// The bias D_ij = c_i - c_j for queries with running sums query_sums [B, H, Tq] and keys with
/// key_sums [B, H, Tk].  -> [B, H, Tq, Tk]
ag::Tensor forgetting_bias(const ag::Tensor& query_sums, const ag::Tensor& key_sums);

/// The gate's part in one attention layer, through the content_bias hook: the layer's gate
/// projection x [.., C] -> [.., H] (w and b per head).
class ForgettingGatePositions : public AttentionPositions {
 public:
  /// width C, heads H; w drawn as a Linear layer draws it, b set to bias_init for every head
  /// (x-transformers' default 5: f = sigmoid(5) = 0.993 at first, a slow decay).
  ForgettingGatePositions(std::int64_t width, std::int64_t heads, double bias_init, ag::Rng& rng,
                          ag::Dtype dtype = ag::Dtype::f32);
  /// log f_t = log_sigmoid(gate(x_t)) [B, H, Tq], for this call's tokens.
  ag::Tensor log_forget(const ag::Tensor& x) const;
  /// scores + forgetting_bias(c of the queries, c of every key). With a cache, the running sums
  /// of the cached tokens come from `cached` and this call's are appended to it.
  ag::Tensor content_bias(const ag::Tensor& scores, const ag::Tensor& x, const Positions& queries,
                          CacheSlot* cached) const override;
  ag::Linear gate;  ///< w [C, H] and b [H]
};

/// The forgetting gate as an encoding: no position anywhere, only the gates; each attention
/// layer gets a gate of its own.
class ForgettingGateEncoding : public PositionalEncoding {
 public:
  /// width C, heads H, the gates' initial bias b (see ForgettingGatePositions).
  ForgettingGateEncoding(std::int64_t width, std::int64_t heads, double bias_init = 5.0,
                         ag::Dtype dtype = ag::Dtype::f32);
  std::string name() const override { return "fox"; }
  std::shared_ptr<AttentionPositions> make_attention_part(ag::Rng& rng) const override;
  /// "slope" [H]: -log sigmoid(b) at the initial b, the ALiBi slope a layer starts from when
  /// w . x = 0; and "bias" [H, length, length], that slope's ALiBi bias.
  std::vector<std::pair<std::string, ag::Tensor>> inspect(std::int64_t length) const override;
  double bias_init() const { return bias_init_; }  ///< b at initialisation

 private:
  std::int64_t width_;
  std::int64_t heads_;
  double bias_init_;
  ag::Dtype dtype_;
};

}  // namespace pe
