// Rotary position embeddings (RoPE): queries and keys are rotated, pair of coordinates by pair
// of coordinates, by an angle proportional to their position, so that q_m . k_n depends on
// the positions only through n - m.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "chapters/01-attention/positional_encoding.hpp"

namespace pe {

struct EncodingSpec;  // encoding_registry.hpp

/// Which coordinates of a head form the 2-D planes that are rotated.
enum class RotaryLayout {
  adjacent,  ///< pairs (0, 1), (2, 3), ...: RoFormer, GPT-J
  half       ///< pairs (i, i + d/2), "rotate half": GPT-NeoX, LLaMA
};

/// "adjacent" or "half"; anything else is an ag::Error.
RotaryLayout rotary_layout_from(const std::string& name);
/// The name rotary_layout_from accepts for `layout`.
std::string rotary_layout_name(RotaryLayout layout);

/// The frequencies theta_i = base^(-2i/d), i = 0 .. d/2-1, for a rotated width d (even).
std::vector<double> rope_frequencies(std::int64_t dim, double base);

/// cos and sin of the angles m * theta_i for positions m = 0 .. length-1:
/// two tensors [length, dim/2] in the given dtype (computed in double, then rounded).
std::pair<ag::Tensor, ag::Tensor> rope_tables(std::int64_t length, std::int64_t dim, double base,
                                              ag::Dtype dtype);
/// The same for given frequencies theta (d/2 of them): cos and sin of m * theta_i.
std::pair<ag::Tensor, ag::Tensor> rope_tables(std::int64_t length, const std::vector<double>& theta,
                                              ag::Dtype dtype);

/// Rotates the first d = 2 * cos.size(1) coordinates of x's last axis; the rest pass through.
/// x [..., T, D] holds `positions` (an offset o means o .. o+T-1); cos, sin [L, d/2] with L
/// past the last position, in x's dtype. Built from slice (or a gather of rows for sampled
/// positions), reshape, mul, sub, add and concat, so the gradient comes from the engine.
/// x: [B, H, T, D] -> [B, H, T, D]
ag::Tensor apply_rotary(const ag::Tensor& x, const Positions& positions, const ag::Tensor& cos,
                        const ag::Tensor& sin, RotaryLayout layout);

/// The positions of `layout` that hold each coordinate of the other layout: a head's vector
/// in the half layout is x_half[j] = x_adjacent[p[j]] with p = (0, 2, 4, ..., 1, 3, 5, ...)
/// on the rotated width d (the rest maps to itself). Rotating and then permuting equals
/// permuting and then rotating in the other layout.
std::vector<std::int64_t> adjacent_to_half_permutation(std::int64_t head_width, std::int64_t dim);

/// A rule that changes RoPE's frequencies for a pass over `length` positions: the hook through
/// which chapter 8's context extension (linear, NTK, dynamic NTK, YaRN: rope_scaling.hpp) and
/// chapter 11's Hugging Face rope types (hf_rope.hpp) turn RoPE without this chapter knowing
/// them. RoPE itself has no rule: theta_i as trained.
class RopeFrequencyRule {
 public:
  virtual ~RopeFrequencyRule() = default;
  /// The frequencies theta'_i, i = 0 .. dim/2-1, for a rotated width dim and base.
  virtual std::vector<double> frequencies(std::int64_t dim, double base,
                                          std::int64_t length) const = 0;
  /// What q and k are multiplied by after their rotation (YaRN's temperature; 1 for most).
  virtual double attention_factor(std::int64_t length) const = 0;
  /// The scale s in force (inspect shows it).
  virtual double scale_at(std::int64_t length) const = 0;
  /// An ag::Error unless the rule can run on this rotated width (NTK needs d > 2).
  virtual void check_width(std::int64_t rotated_width) const = 0;
};

/// The options of `pe train --encoding rope`.
struct RotaryOptions {
  double base = 10000;                           ///< theta_i = base^(-2i/d)
  RotaryLayout layout = RotaryLayout::adjacent;  ///< which coordinates pair up
  double fraction = 1.0;  ///< rotate the first fraction * D coordinates (GPT-NeoX's rotary_pct)
  /// A rule to reach past the training length (chapter 8); none: the trained frequencies.
  std::shared_ptr<const RopeFrequencyRule> rule = nullptr;
};

/// The rotated width d = floor(fraction * D) of a head of width D; an ag::Error unless d is even
/// and positive, fraction lies in (0, 1], base > 1 and the rule, if any, accepts d.
std::int64_t rotary_width(std::int64_t head_width, const RotaryOptions& options);

/// RoPE's part in each attention layer, through the rotate hook. No parameters: every layer
/// turns by the same angles.
class RotaryPositions : public AttentionPositions {
 public:
  /// head_width D; the options as rotary_width checks them.
  RotaryPositions(std::int64_t head_width, RotaryOptions options = {});
  /// q, k [B, H, T, D] at `positions` -> both rotated. A scaling rule sees the length
  /// L = the last position + 1 (offset + T when contiguous).
  std::pair<ag::Tensor, ag::Tensor> rotate(const ag::Tensor& q, const ag::Tensor& k,
                                           const Positions& positions) const override;

 private:
  std::int64_t head_width_, rotated_width_;
  RotaryOptions options_;
};

/// RoPE: nothing before the first block; each attention layer gets a RotaryPositions.
class RotaryEncoding : public PositionalEncoding {
 public:
  /// head_width D; the options as rotary_width checks them.
  RotaryEncoding(std::int64_t head_width, RotaryOptions options = {});
  std::string name() const override { return "rope"; }
  /// A RotaryPositions with this encoding's head width and options.
  std::shared_ptr<AttentionPositions> make_attention_part(ag::Rng& rng) const override;
  /// "cos", "sin" [length, d/2]; "rotated_example" [length, D]: the unit vector
  /// (1, 1, ..., 1) / sqrt(D) rotated to each position 0 .. length-1; "frequencies" [d/2]: the
  /// theta'_i in force for a pass over `length` positions (the scaling rule applied), "scale"
  /// [1]: its s, "attention_factor" [1]: what q and k are multiplied by (YaRN).
  std::vector<std::pair<std::string, ag::Tensor>> inspect(std::int64_t length) const override;

  std::int64_t head_width() const { return head_width_; }        ///< D
  std::int64_t rotated_width() const { return rotated_width_; }  ///< d, the rotated part of D
  const RotaryOptions& options() const { return options_; }      ///< as constructed

 private:
  std::int64_t head_width_, rotated_width_;
  RotaryOptions options_;
};

/// Reads a later chapter's options of a "rope" spec into a rule; null when the spec gives none
/// of them (or asks for RoPE as trained).
using RopeRuleReader =
    std::function<std::shared_ptr<const RopeFrequencyRule>(const EncodingSpec& spec)>;

/// The hook for a later chapter (chapter 8's scaling rules, chapter 11's Hugging Face rope
/// types): from now on "rope" accepts the options `option_names` too, and builds its rule with
/// `read` when a spec gives one of them. Extensions compose: each reads only its own options,
/// and a spec that gives options only two different extensions take (scaling=... and
/// rope_type=...) is an error naming both, with `owner` ("chapter 8") saying whose they are;
/// an option two extensions share (truncate) goes with the one the other options choose.
/// Registers "rope" first if it is not there; extending again with the same names replaces
/// that extension's reader and adds nothing.
void extend_rope(const std::vector<std::string>& option_names, RopeRuleReader read,
                 const std::string& owner = "a later chapter");

/// Adds "rope" (options base, layout and fraction) to the registry.
void register_ch05_encodings();

}  // namespace pe
