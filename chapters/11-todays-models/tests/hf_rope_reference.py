#!/usr/bin/env python3
"""Reference values for chapter 11's Hugging Face rope types, from the published formulas.

    python3 chapters/11-todays-models/tests/hf_rope_reference.py \
        > chapters/11-todays-models/tests/hf_rope_reference_values.hpp

Each function below transcribes one _compute_<type>_parameters of transformers'
src/transformers/modeling_rope_utils.py line by line, in float64 with plain `math` (transformers
computes in float32 tensors; the test says where that matters). The output is a C++ header of
literals (17 significant digits) that test_ch11_hf_rope.cpp compares the library with to 1e-12,
relatively: the cases' parameters, the inverse frequencies and the attention factor.
"""
import math

WIDTHS = [8, 16, 64, 96, 128, 256]

# Phi-3.5-mini-instruct's rope_scaling (head_dim 96: 48 entries each), as its config.json has
# them; original_max_position_embeddings 4096, max_position_embeddings 131072.
PHI35_SHORT = [
    1.0, 1.0199999809265137, 1.0299999713897705, 1.0299999713897705, 1.0499999523162842,
    1.0499999523162842, 1.0499999523162842, 1.0499999523162842, 1.0499999523162842,
    1.0699999332427979, 1.0999999046325684, 1.1099998950958252, 1.1599998474121094,
    1.1599998474121094, 1.1699998378753662, 1.2899998426437378, 1.339999794960022,
    1.679999828338623, 1.7899998426437378, 1.8199998140335083, 1.8499997854232788,
    1.8799997568130493, 1.9099997282028198, 1.9399996995925903, 1.9899996519088745,
    2.0199997425079346, 2.0199997425079346, 2.0199997425079346, 2.0199997425079346,
    2.0199997425079346, 2.0199997425079346, 2.0299997329711914, 2.0299997329711914,
    2.0299997329711914, 2.0299997329711914, 2.0299997329711914, 2.0299997329711914,
    2.0299997329711914, 2.0299997329711914, 2.0299997329711914, 2.0799996852874756,
    2.0899996757507324, 2.189999580383301, 2.2199995517730713, 2.5899994373321533,
    2.729999542236328, 2.749999523162842, 2.8399994373321533]
PHI35_LONG = [
    1.0800000429153442, 1.1100000143051147, 1.1399999856948853, 1.340000033378601,
    1.5899999141693115, 1.600000023841858, 1.6200000047683716, 2.620000123977661,
    3.2300000190734863, 3.2300000190734863, 4.789999961853027, 7.400000095367432,
    7.700000286102295, 9.09000015258789, 12.199999809265137, 17.670000076293945,
    24.46000099182129, 28.57000160217285, 30.420001983642578, 30.840002059936523,
    32.590003967285156, 32.93000411987305, 42.320003509521484, 44.96000289916992,
    50.340003967285156, 50.45000457763672, 57.55000305175781, 57.93000411987305,
    58.21000289916992, 60.1400032043457, 62.61000442504883, 62.62000274658203,
    62.71000289916992, 63.1400032043457, 63.1400032043457, 63.77000427246094,
    63.93000411987305, 63.96000289916992, 63.970001220703125, 64.02999877929688,
    64.06999969482422, 64.08000183105469, 64.12000274658203, 64.41000366210938,
    64.4800033569336, 64.51000213623047, 64.52999877929688, 64.83999633789062]


def resampled(values, n):
    """Phi-3.5's list stretched or shrunk to n entries (entry i takes entry i * 48 // n)."""
    return [values[i * len(values) // n] for i in range(n)]


def rotated_dim(head_dim, partial_rotary_factor):
    return int(head_dim * partial_rotary_factor)  # dim = int(head_dim * partial_rotary_factor)


def default(c):
    dim = rotated_dim(c["head_dim"], c.get("partial_rotary_factor", 1.0))
    base = c["rope_theta"]
    return [1.0 / (base ** (j / dim)) for j in range(0, dim, 2)], 1.0


def linear(c):
    inv_freq, attention_factor = default(c)
    return [f / c["factor"] for f in inv_freq], attention_factor


def dynamic(c, seq_len):
    base, factor, mpe = c["rope_theta"], c["factor"], c["max_position_embeddings"]
    dim = rotated_dim(c["head_dim"], c.get("partial_rotary_factor", 1.0))
    seq_len = mpe if seq_len is None else max(seq_len, mpe)
    base = base * ((factor * seq_len / mpe) - (factor - 1)) ** (dim / (dim - 2))
    return [1.0 / (base ** (j / dim)) for j in range(0, dim, 2)], 1.0


def get_mscale(scale, mscale=1):
    if scale <= 1:
        return 1.0
    return 0.1 * mscale * math.log(scale) + 1.0


def yarn(c):
    base = c["rope_theta"]
    dim = rotated_dim(c["head_dim"], c.get("partial_rotary_factor", 1.0))
    factor = c.get("factor")
    attention_factor = c.get("attention_factor")
    mscale = c.get("mscale")
    mscale_all_dim = c.get("mscale_all_dim")
    original = c["original_max_position_embeddings"]
    if factor is None:
        factor = c["max_position_embeddings"] / original
    if attention_factor is None:
        if mscale and mscale_all_dim:
            attention_factor = float(get_mscale(factor, mscale) / get_mscale(factor, mscale_all_dim))
        else:
            attention_factor = get_mscale(factor)
    beta_fast = c.get("beta_fast") or 32
    beta_slow = c.get("beta_slow") or 1

    def find_correction_dim(num_rotations, dim, base, max_position_embeddings):
        return (dim * math.log(max_position_embeddings / (num_rotations * 2 * math.pi))) / (
            2 * math.log(base))

    def find_correction_range(low_rot, high_rot, dim, base, max_position_embeddings, truncate):
        low = find_correction_dim(low_rot, dim, base, max_position_embeddings)
        high = find_correction_dim(high_rot, dim, base, max_position_embeddings)
        if truncate:
            low = math.floor(low)
            high = math.ceil(high)
        return max(low, 0), min(high, dim - 1)

    def linear_ramp_factor(min, max, dim):
        if min == max:
            max += 0.001
        return [min_max_clamp((i - min) / (max - min)) for i in range(dim)]

    def min_max_clamp(x):
        return 0.0 if x < 0 else 1.0 if x > 1 else x

    pos_freqs = [base ** (j / dim) for j in range(0, dim, 2)]
    inv_freq_extrapolation = [1.0 / p for p in pos_freqs]
    inv_freq_interpolation = [1.0 / (factor * p) for p in pos_freqs]
    truncate = c.get("truncate", True)
    low, high = find_correction_range(beta_fast, beta_slow, dim, base, original, truncate)
    extrapolation_factor = [1 - r for r in linear_ramp_factor(low, high, dim // 2)]
    inv_freq = [i * (1 - e) + x * e for i, x, e in
                zip(inv_freq_interpolation, inv_freq_extrapolation, extrapolation_factor)]
    return inv_freq, attention_factor


def longrope(c, seq_len):
    base = c["rope_theta"]
    dim = rotated_dim(c["head_dim"], c.get("partial_rotary_factor", 1.0))
    long_factor, short_factor = c["long_factor"], c["short_factor"]
    factor = c.get("factor")
    attention_factor = c.get("attention_factor")
    original = c["original_max_position_embeddings"]
    if factor is None:
        factor = c["max_position_embeddings"] / original
    if attention_factor is None:
        if factor <= 1.0:
            attention_factor = 1.0
        else:
            attention_factor = math.sqrt(1 + math.log(factor) / math.log(original))
    ext_factors = long_factor if seq_len and seq_len > original else short_factor
    inv_freq_shape = [j / dim for j in range(0, dim, 2)]
    return [1.0 / (e * base ** s) for e, s in zip(ext_factors, inv_freq_shape)], attention_factor


def llama3(c):
    inv_freq, attention_factor = default(c)
    factor = c["factor"]
    low_freq_factor, high_freq_factor = c["low_freq_factor"], c["high_freq_factor"]
    old_context_len = c["original_max_position_embeddings"]
    low_freq_wavelen = old_context_len / low_freq_factor
    high_freq_wavelen = old_context_len / high_freq_factor
    out = []
    for f in inv_freq:
        wavelen = 2 * math.pi / f
        f_llama = f / factor if wavelen > low_freq_wavelen else f
        smooth_factor = (old_context_len / wavelen - low_freq_factor) / (
            high_freq_factor - low_freq_factor)
        smoothed = (1 - smooth_factor) * f_llama / factor + smooth_factor * f_llama
        is_medium_freq = not (wavelen < high_freq_wavelen) and not (wavelen > low_freq_wavelen)
        out.append(smoothed if is_medium_freq else f_llama)
    return out, attention_factor


def proportional(c):
    head_dim, base = c["head_dim"], c["rope_theta"]
    factor = c.get("factor", 1.0)
    rope_proportion = c.get("partial_rotary_factor", 1.0)
    rope_angles = int(rope_proportion * head_dim // 2)
    inv_freq_rotated = [1.0 / (base ** (j / head_dim)) for j in range(0, 2 * rope_angles, 2)]
    nope_angles = head_dim // 2 - rope_angles
    inv_freq = inv_freq_rotated + [0.0] * nope_angles if nope_angles > 0 else inv_freq_rotated
    return [f / factor for f in inv_freq], 1.0


# name, rope_type, the parameters besides head_dim, seq_len (None: Hugging Face's None)
CASES = [
    ("default", "default", {"rope_theta": 10000.0}, None),
    ("default_partial", "default", {"rope_theta": 500000.0, "partial_rotary_factor": 0.5}, None),
    ("linear", "linear", {"rope_theta": 10000.0, "factor": 8.0}, None),
    ("dynamic", "dynamic",
     {"rope_theta": 10000.0, "factor": 8.0, "max_position_embeddings": 4096}, 16384),
    ("yarn", "yarn", {"rope_theta": 10000.0, "factor": 16.0,
                      "original_max_position_embeddings": 4096}, None),
    # DeepSeek-V3's rope_scaling (its qk_rope_head_dim is 64)
    ("yarn_deepseek", "yarn",
     {"rope_theta": 10000.0, "factor": 40.0, "mscale": 1.0, "mscale_all_dim": 1.0,
      "beta_fast": 32.0, "beta_slow": 1.0, "original_max_position_embeddings": 4096}, None),
    ("yarn_untruncated", "yarn",
     {"rope_theta": 500000.0, "max_position_embeddings": 16384, "mscale": 0.707,
      "mscale_all_dim": 1.0, "beta_fast": 16.0, "beta_slow": 2.0, "truncate": False,
      "original_max_position_embeddings": 2048, "partial_rotary_factor": 0.5}, None),
    ("longrope_short", "longrope",
     {"rope_theta": 10000.0, "max_position_embeddings": 131072,
      "original_max_position_embeddings": 4096}, 4096),
    ("longrope_long", "longrope",
     {"rope_theta": 10000.0, "max_position_embeddings": 131072,
      "original_max_position_embeddings": 4096}, 4097),
    # Llama 3.1's rope_scaling
    ("llama3", "llama3",
     {"rope_theta": 500000.0, "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
      "original_max_position_embeddings": 8192}, None),
    ("llama3_partial", "llama3",
     {"rope_theta": 10000.0, "factor": 16.0, "low_freq_factor": 2.0, "high_freq_factor": 8.0,
      "original_max_position_embeddings": 512, "partial_rotary_factor": 0.5}, None),
    ("proportional", "proportional", {"rope_theta": 1000000.0, "partial_rotary_factor": 0.25},
     None),
    ("proportional_factor", "proportional",
     {"rope_theta": 10000.0, "partial_rotary_factor": 0.3, "factor": 8.0}, None),
]

COMPUTE = {"default": lambda c, s: default(c), "linear": lambda c, s: linear(c),
           "dynamic": dynamic, "yarn": lambda c, s: yarn(c), "longrope": longrope,
           "llama3": lambda c, s: llama3(c), "proportional": lambda c, s: proportional(c)}


def g(x):
    return format(x, ".17g")


def numbers(values, indent):
    """Three to a line, within the 100 columns of .clang-format."""
    lines = [", ".join(g(v) for v in values[i:i + 3]) for i in range(0, len(values), 3)]
    return (",\n" + indent).join(lines)


def packed(items, indent):
    """Items joined by commas, as many to a line as 100 columns hold."""
    lines = [""]
    for item in items:
        if lines[-1] and len(indent) + len(lines[-1]) + len(item) + 3 > 100:
            lines.append("")
        lines[-1] += (", " if lines[-1] else "") + item
    return (",\n" + indent).join(lines)


# The fields of a case besides the lists, in config.json's names, as the header gives them.
NUMBERS = ["rope_theta", "head_dim", "partial_rotary_factor", "max_position_embeddings",
           "original_max_position_embeddings", "factor", "attention_factor", "beta_fast",
           "beta_slow", "mscale", "mscale_all_dim", "truncate", "low_freq_factor",
           "high_freq_factor"]


def main():
    print(f"""// Reference values of chapter 11's Hugging Face rope types, written by
//   python3 chapters/11-todays-models/tests/hf_rope_reference.py
//     > chapters/11-todays-models/tests/hf_rope_reference_values.hpp
// (the published formulas of transformers' modeling_rope_utils.py in float64, plain math):
// do not edit by hand, run the script again.
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

namespace pe::hf_rope_reference {{

/// One case: a layer type's rope parameters as a config.json names them, the sequence length
/// of the pass, and what Hugging Face's formulas give.
struct Case {{
  const char* name;                                    ///< the script's name of the case
  const char* rope_type;                               ///< as the config gives it
  std::vector<std::pair<const char*, double>> fields;  ///< the numbers (truncate: 0 or 1)
  std::vector<double> short_factor, long_factor;       ///< longrope's lists
  std::int64_t seq_len;                                ///< 0: Hugging Face's None
  std::vector<double> inv_freq;                        ///< the reference's inverse frequencies
  double attention_factor;                             ///< the reference's attention factor
}};

/// Every case: each of the script's CASES for head_dim {", ".join(str(w) for w in WIDTHS)}.
inline std::vector<Case> cases() {{
  // clang-format off
  return {{""")
    for name, rope_type, parameters, seq_len in CASES:
        for width in WIDTHS:
            c = dict(parameters, head_dim=width)
            dim = rotated_dim(width, c.get("partial_rotary_factor", 1.0))
            if rope_type == "longrope":
                c["short_factor"] = resampled(PHI35_SHORT, dim // 2)
                c["long_factor"] = resampled(PHI35_LONG, dim // 2)
            inv_freq, attention_factor = COMPUTE[rope_type](c, seq_len)
            fields = [f'{{"{k}", {g(float(c[k]))}}}' for k in NUMBERS if k in c]
            print(f'    {{"{name} {width}", "{rope_type}",')
            print(f"     {{{packed(fields, '      ')}}},")
            for key in ["short_factor", "long_factor"]:
                print(f"     {{{numbers(c[key], '      ')}}}," if key in c else "     {},")
            print(f"     {seq_len or 0},")
            print(f"     {{{numbers(inv_freq, '      ')}}},")
            print(f"     {g(attention_factor)}}},")
    print("""  };
  // clang-format on
}

}  // namespace pe::hf_rope_reference""")


if __name__ == "__main__":
    main()
