#!/usr/bin/env python3
"""Llama 3.1's inverse frequencies as transformers computes them, in float32 with torch.

    python3 chapters/11-todays-models/tests/hf_rope_float32.py   (needs torch; run once)

_compute_llama3_parameters' lines for head_dim 128, rope_theta 500000, factor 8,
low_freq_factor 1, high_freq_factor 4, original_max_position_embeddings 8192, on float32
tensors as transformers runs them. Prints the values (each a float32, printed exactly as a
double) that test_ch11_hf_rope.cpp holds as literals, to show how far float32 lies from the
float64 values the library computes.
"""
import math

import torch

base, dim, factor, low_freq_factor, high_freq_factor, old_context_len = 500000.0, 128, 8, 1, 4, 8192
inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).to(dtype=torch.float) / dim))
low_freq_wavelen = old_context_len / low_freq_factor
high_freq_wavelen = old_context_len / high_freq_factor
wavelen = 2 * math.pi / inv_freq
inv_freq_llama = torch.where(wavelen > low_freq_wavelen, inv_freq / factor, inv_freq)
smooth_factor = (old_context_len / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
smoothed_inv_freq = (1 - smooth_factor) * inv_freq_llama / factor + smooth_factor * inv_freq_llama
is_medium_freq = ~(wavelen < high_freq_wavelen) * ~(wavelen > low_freq_wavelen)
inv_freq_llama = torch.where(is_medium_freq, smoothed_inv_freq, inv_freq_llama)
assert inv_freq_llama.dtype == torch.float32
values = [repr(float(x)) for x in inv_freq_llama]
print(",\n".join(", ".join(values[i:i + 3]) for i in range(0, len(values), 3)))
