"""The book's decoder in PyTorch, with every positional encoding of chapters 2 to 8.

The same model as chapters/01-attention/decoder.cpp: token embedding, the encoding's embed
hook, L pre-LayerNorm blocks (attention, then a ReLU feed-forward network), a final norm and an
untied output head. An encoding reaches into the model through the same hooks as in C++
(chapters/01-attention/positional_encoding.hpp): embed before the first block (absolute
encodings), and in each attention layer rotate (RoPE), bias (terms added to the scores) and
values (Shaw's term added to the output). Only full passes: every sequence starts at
position 0 (no key/value cache, so no offsets).

Shapes: B batch, T length, C width, H heads, D = C / H head width, V vocabulary.
Appendix D (chapters/D-pytorch/README.md) reads this file; check_logits.py compares it with
the C++ forward pass through the files `pe export` writes.
"""
import math

import torch
import torch.nn.functional as F
from torch import nn


# [hooks]
class Positions(nn.Module):
    """One attention layer's part of an encoding. These hooks do nothing: chapter 1's model,
    which knows no positions."""

    def rotate(self, q, k):  # q, k [B, H, T, D] -> both turned
        return q, k

    def bias(self, scores, q, k):  # scores [B, H, T, T] -> plus the encoding's terms
        return scores

    def values(self, out, weights):  # out [B, H, T, D], weights [B, H, T, T] -> plus a term
        return out


class Encoding(nn.Module):
    """An encoding: its hook before the first block, and the part each layer gets."""

    def embed(self, x):  # x [B, T, C] -> x plus the positions' vectors
        return x

    def make_positions(self):
        return Positions()
# [hooks]


# [model]
class Attention(nn.Module):
    def __init__(self, width, heads, positions, causal=True, sink_logits=False):
        super().__init__()
        self.heads, self.causal = heads, causal
        self.query, self.key = nn.Linear(width, width), nn.Linear(width, width)
        self.value, self.output = nn.Linear(width, width), nn.Linear(width, width)
        self.positions = positions  # this layer's part of the encoding
        # chapter 12: one learned logit per head joins every softmax as a key without a value
        self.sink_logits = nn.Parameter(torch.zeros(heads)) if sink_logits else None

    def forward(self, x):  # x [B, T, C] -> [B, T, C]
        B, T, C = x.shape
        def split(y): return y.view(B, T, self.heads, C // self.heads).transpose(1, 2)
        q, k, v = split(self.query(x)), split(self.key(x)), split(self.value(x))  # [B, H, T, D]
        q, k = self.positions.rotate(q, k)
        scores = q @ k.transpose(-2, -1) * (1 / math.sqrt(q.shape[-1]))  # [B, H, T, T]
        scores = self.positions.bias(scores, q, k)
        if self.causal:  # a query never sees a later key
            future = torch.ones(T, T, dtype=torch.bool).triu(1)
            scores = scores.masked_fill(future, -math.inf)
        if self.sink_logits is None:
            weights = scores.softmax(-1)
        else:  # the sink is one more column of every row: softmax, then drop it
            sink = self.sink_logits.view(1, -1, 1, 1).expand(B, -1, T, 1)
            weights = torch.cat([scores, sink], -1).softmax(-1)[..., :T]
        out = self.positions.values(weights @ v, weights)  # [B, H, T, D]
        return self.output(out.transpose(1, 2).reshape(B, T, C))


class Block(nn.Module):
    def __init__(self, width, heads, ffn_width, positions, eps, causal=True, sink_logits=False):
        super().__init__()
        self.norm1 = nn.LayerNorm(width, eps=eps)
        self.attention = Attention(width, heads, positions, causal, sink_logits)
        self.norm2 = nn.LayerNorm(width, eps=eps)
        self.expand, self.contract = nn.Linear(width, ffn_width), nn.Linear(ffn_width, width)

    def forward(self, x):  # pre-LayerNorm: x + attention(LN(x)), then h + FFN(LN(h))
        h = x + self.attention(self.norm1(x))
        return h + self.contract(F.relu(self.expand(self.norm2(h))))


class Decoder(nn.Module):
    def __init__(self, vocab, width, heads, layers, ffn_width, encoding, eps=1e-5, causal=True,
                 sink_logits=False):
        super().__init__()
        self.tokens = nn.Embedding(vocab, width)
        self.encoding = encoding  # before the blocks: parameters the layers share are its own
        self.blocks = nn.ModuleList(
            Block(width, heads, ffn_width, encoding.make_positions(), eps, causal, sink_logits)
            for _ in range(layers))
        self.final_norm = nn.LayerNorm(width, eps=eps)
        self.head = nn.Linear(width, vocab)

    def forward(self, ids):  # ids [B, T] -> logits [B, T, V]
        x = self.encoding.embed(self.tokens(ids))
        for block in self.blocks:
            x = block(x)
        return self.head(self.final_norm(x))
# [model]


# [distances]
def key_minus_query(T):
    """j - i for every query i and key j: [T, T], negative for the keys behind the query."""
    i = torch.arange(T)
    return i[None, :] - i[:, None]
# [distances]


# --- chapter 2: sinusoidal ------------------------------------------------------------------

# [sinusoidal]
def sinusoid(positions, width, base=10000.0, layout="interleaved"):
    """PE(p, 2i) = sin(p w_i), PE(p, 2i+1) = cos(p w_i), w_i = base^(-2i/C), for the positions
    given (Transformer-XL's distances may be negative): [N, C] in float64."""
    w = base ** (-2 * torch.arange(width // 2, dtype=torch.float64) / width)  # [C/2]
    angles = positions.to(torch.float64)[:, None] * w  # [N, C/2]
    if layout == "interleaved":  # sin, cos, sin, cos, ...: the paper's layout
        return torch.stack((angles.sin(), angles.cos()), -1).flatten(-2)
    return torch.cat((angles.sin(), angles.cos()), -1)  # the sines, then the cosines


class Sinusoidal(Encoding):
    def __init__(self, base, layout):
        super().__init__()
        self.base, self.layout = base, layout

    def embed(self, x):
        T, C = x.shape[1], x.shape[2]
        return x + sinusoid(torch.arange(T), C, self.base, self.layout).to(x.dtype)
# [sinusoidal]


# --- chapter 3: learned ---------------------------------------------------------------------

# [learned]
class Learned(Encoding):
    def __init__(self, max_len, width):
        super().__init__()
        self.table = nn.Parameter(torch.zeros(max_len, width))  # one trained row per position

    def embed(self, x):
        T = x.shape[1]
        if T > len(self.table):  # a row that was never trained does not exist
            raise ValueError(f"learned: {T} positions, but the table has {len(self.table)} rows")
        return x + self.table[:T]
# [learned]


# --- chapter 4: Shaw, Transformer-XL, T5 ----------------------------------------------------

# [shaw]
class ShawPositions(Positions):
    """a^K_ij and a^V_ij: rows of two tables [2k+1, D], chosen by clip(j - i, -k, k)."""

    def __init__(self, max_distance, head_width):
        super().__init__()
        self.k = max_distance
        self.key_table = nn.Parameter(torch.zeros(2 * max_distance + 1, head_width))
        self.value_table = nn.Parameter(torch.zeros(2 * max_distance + 1, head_width))

    def rows(self, T):  # clip(j - i, -k, k) + k: [T, T] in 0 .. 2k
        return key_minus_query(T).clamp(-self.k, self.k) + self.k

    def bias(self, scores, q, k):  # + q_i . a^K_ij / sqrt(D)
        a = self.key_table[self.rows(q.shape[2])]  # [T, T, D]
        return scores + torch.einsum("bhid,ijd->bhij", q, a) * (1 / math.sqrt(q.shape[-1]))

    def values(self, out, weights):  # + sum_j weights_ij a^V_ij
        a = self.value_table[self.rows(weights.shape[2])]  # [T, T, D]
        return out + torch.einsum("bhij,ijd->bhid", weights, a)


class Shaw(Encoding):
    def __init__(self, max_distance, head_width):
        super().__init__()
        self.max_distance, self.head_width = max_distance, head_width

    def make_positions(self):  # each layer has tables of its own
        return ShawPositions(self.max_distance, self.head_width)
# [shaw]


# [xl]
class TransformerXLPositions(Positions):
    """(a) q_i . k_j arrives as the scores; adds (c) u . k_j and (b) + (d) (q_i + v) . W_R R_{i-j},
    R a fixed sinusoid of the distance i - j, all divided by sqrt(D) alike."""

    def __init__(self, u, v, width):
        super().__init__()
        # u, v [H, 1, D] are the encoding's, shared by every layer (the model lists them once,
        # under encoding.u and encoding.v); W_R [C, C] is this layer's own
        self.u, self.v = u, v
        self.w_r = nn.Parameter(torch.zeros(width, width))

    def bias(self, scores, q, k):
        H, T, D = q.shape[1], q.shape[2], q.shape[3]
        R = sinusoid(-key_minus_query(T).flatten(), H * D).to(q.dtype)  # R_{i-j}: [T T, C]
        projected = (R @ self.w_r).view(T, T, H, D)  # W_R R_{i-j}, cut into heads
        content = (k * self.u).sum(-1)[:, :, None, :]  # (c): [B, H, 1, T]
        position = torch.einsum("bhid,ijhd->bhij", q + self.v, projected)  # (b) + (d)
        return scores + (position + content) * (1 / math.sqrt(D))


class TransformerXL(Encoding):
    def __init__(self, width, heads):
        super().__init__()
        self.width = width
        self.u = nn.Parameter(torch.zeros(heads, 1, width // heads))
        self.v = nn.Parameter(torch.zeros(heads, 1, width // heads))

    def make_positions(self):
        return TransformerXLPositions(self.u, self.v, self.width)
# [xl]


# [t5]
def t5_bucket(relative_position, buckets, max_distance, bidirectional):
    """T5's bucket of j - i: exact for the near distances, logarithmic for far ones."""
    side, first = buckets, 0
    if bidirectional:  # keys after the query take the upper half
        side //= 2
        first = side if relative_position > 0 else 0
        n = abs(relative_position)
    else:  # causal: every future key is distance 0
        n = max(-relative_position, 0)
    max_exact = side // 2
    if n < max_exact:
        return first + n
    scaled = math.log(n / max_exact) / math.log(max_distance / max_exact) * (side - max_exact)
    return first + min(max_exact + int(scaled), side - 1)


class T5Positions(Positions):
    def __init__(self, table, options):
        super().__init__()
        self.table, self.options = table, options  # [buckets, H], shared by every layer

    def bias(self, scores, q, k):  # + table[bucket(j - i), h]
        T = scores.shape[-1]
        buckets = torch.tensor([[t5_bucket(j - i, *self.options) for j in range(T)]
                                for i in range(T)])  # [T, T]
        return scores + self.table[buckets].permute(2, 0, 1)  # [H, T, T]


class T5(Encoding):
    def __init__(self, heads, buckets, max_distance, bidirectional):
        super().__init__()
        self.options = (buckets, max_distance, bidirectional)
        self.table = nn.Parameter(torch.zeros(buckets, heads))

    def make_positions(self):
        return T5Positions(self.table, self.options)
# [t5]


# --- chapter 5: RoPE, and chapter 8's scaling rules -----------------------------------------

# [rope]
def rotate_pairs(x, cos, sin, layout):
    """Turns plane i of every head by the angle m theta_i: x [B, H, T, D], cos and sin
    [T, d/2]. The first d coordinates of a head turn, the rest pass through."""
    d = 2 * cos.shape[-1]
    turned, rest = x[..., :d], x[..., d:]
    if layout == "adjacent":  # planes (0, 1), (2, 3), ...: RoFormer, GPT-J
        a, b = turned[..., 0::2], turned[..., 1::2]
    else:  # "half": planes (i, i + d/2), GPT-NeoX, LLaMA
        a, b = turned[..., :d // 2], turned[..., d // 2:]
    a, b = a * cos - b * sin, a * sin + b * cos  # (a, b) turned anticlockwise
    if layout == "adjacent":
        turned = torch.stack((a, b), -1).flatten(-2)
    else:
        turned = torch.cat((a, b), -1)
    return torch.cat((turned, rest), -1)


class RotaryPositions(Positions):
    def __init__(self, rotated_width, base, layout, scaling):
        super().__init__()
        self.d, self.base, self.layout, self.scaling = rotated_width, base, layout, scaling

    def rotate(self, q, k):
        T = q.shape[2]
        theta = self.scaling.frequencies(self.d, self.base, T)  # [d/2], float64
        angles = torch.arange(T, dtype=torch.float64)[:, None] * theta  # m theta_i: [T, d/2]
        cos, sin = angles.cos().to(q.dtype), angles.sin().to(q.dtype)
        factor = self.scaling.attention_factor(T)  # YaRN's temperature; 1 for the others
        q, k = rotate_pairs(q, cos, sin, self.layout), rotate_pairs(k, cos, sin, self.layout)
        return (q, k) if factor == 1 else (q * factor, k * factor)


class Rotary(Encoding):
    def __init__(self, head_width, base, layout, fraction, scaling):
        super().__init__()
        self.d = int(math.floor(fraction * head_width + 1e-9))  # rotated width, GPT-NeoX's
        self.base, self.layout, self.scaling = base, layout, scaling

    def make_positions(self):  # no parameters: every layer turns by the same angles
        return RotaryPositions(self.d, self.base, self.layout, self.scaling)


def rope_frequencies(d, base):  # theta_i = base^(-2i/d), i = 0 .. d/2-1
    return base ** (-2 * torch.arange(d // 2, dtype=torch.float64) / d)
# [rope]


# [rope-scaling]
def ramp(x, a, b):  # 0 up to a, 1 from b on, linear between
    return ((x - a) / (b - a)).clamp(0, 1)


class RopeScaling:
    """Chapter 8's rules: new frequencies theta'_i to read past the training length L."""

    def __init__(self, method="none", scale=1.0, train_length=0, alpha=1.0, beta=32.0,
                 truncate=True):
        self.method, self.s, self.L = method, scale, train_length
        self.alpha, self.beta, self.truncate = alpha, beta, truncate

    def scale_at(self, T):  # dynamic NTK grows its scale with the length
        if self.method == "none":
            return 1.0
        if self.method == "dynamic":
            return self.s * max(T, self.L) / self.L - (self.s - 1)
        return self.s

    def attention_factor(self, T):  # both YaRNs: q and k times 0.1 ln s + 1
        if self.method not in ("yarn", "yarn-paper"):
            return 1.0
        return 0.1 * math.log(self.scale_at(T)) + 1

    def frequencies(self, d, base, T):
        s, theta = self.scale_at(T), rope_frequencies(d, base)
        if self.method == "none":
            return theta
        if self.method in ("ntk", "dynamic"):  # base' = base s^(d/(d-2))
            return rope_frequencies(d, base * s ** (d / (d - 2)))
        if self.method == "linear":  # position interpolation: positions m / s
            return theta / s
        if self.method == "yarn-paper":  # a ramp in the rotations r_i = L theta_i / 2 pi
            gamma = ramp(self.L * theta / (2 * math.pi), self.alpha, self.beta)
        else:  # "yarn": a ramp in the plane index i, between the planes turning beta and alpha
            def plane(rotations):  # the i at which r_i = rotations
                return d * math.log(self.L / (rotations * 2 * math.pi)) / (2 * math.log(base))
            low, high = plane(self.beta), plane(self.alpha)
            if self.truncate:
                low, high = math.floor(low), math.ceil(high)
            low, high = max(low, 0.0), min(high, d - 1.0)
            if low == high:
                high += 0.001
            gamma = 1 - ramp(torch.arange(d // 2, dtype=torch.float64), low, high)
        return (1 - gamma) * theta / s + gamma * theta  # kept where gamma = 1, theta / s at 0
# [rope-scaling]


# --- chapter 6: ALiBi -----------------------------------------------------------------------

# [alibi]
def alibi_slopes(H):
    """2^(-8/H), 2^(-16/H), ..., 2^(-8) for H a power of two; otherwise those of the largest
    power of two P below H, then every other slope of 2P for the H - P heads left."""
    def geometric(n):
        return [2 ** (-8 * (h + 1) / n) for h in range(n)]
    P = 1 << (H.bit_length() - 1)
    return geometric(P) + geometric(2 * P)[0::2][:H - P]


class AlibiPositions(Positions):
    def __init__(self, heads):
        super().__init__()
        self.slopes = torch.tensor(alibi_slopes(heads), dtype=torch.float64)

    def bias(self, scores, q, k):  # - slope_h (i - j), written slope_h (j - i)
        distances = key_minus_query(scores.shape[-1]).to(torch.float64)
        return scores + (self.slopes[:, None, None] * distances).to(scores.dtype)  # [H, T, T]


class Alibi(Encoding):
    def __init__(self, heads):
        super().__init__()
        self.heads = heads

    def make_positions(self):  # no parameters: every layer adds the same bias
        return AlibiPositions(self.heads)
# [alibi]


# --- building a model from `pe export`'s description ------------------------------------------

class Options:
    """An encoding's options as `pe train -o key=value` gave them; a key that is not read is
    a mistake, as in C++ (chapters/01-attention/encoding_registry.cpp)."""

    def __init__(self, encoding, options):
        self.encoding, self.given, self.read = encoding, dict(options), set()

    def get(self, key, default, kind=str):
        self.read.add(key)
        if key not in self.given:
            return default
        text = self.given[key]
        if kind is bool:
            if text not in ("true", "1", "false", "0"):
                raise ValueError(f"{self.encoding}: option {key} is true or false, not '{text}'")
            return text in ("true", "1")
        return kind(text)

    def check_all_read(self):
        unknown = sorted(set(self.given) - self.read)
        if unknown:
            raise ValueError(f"{self.encoding}: unknown options {', '.join(unknown)}")


# [registry]
def make_encoding(name, options, width, heads, max_length):
    """The encoding `name` with the options of its `pe train` run, and C++'s defaults."""
    o = Options(name, options)
    D = width // heads
    if name == "none":
        encoding = Encoding()
    elif name == "sinusoidal":
        encoding = Sinusoidal(o.get("base", 10000.0, float), o.get("layout", "interleaved"))
    elif name == "learned":
        encoding = Learned(o.get("max_len", max_length, int), width)
    elif name == "shaw":
        o.get("pairwise", False, bool)  # the same values either way (C++ measures its memory)
        encoding = Shaw(o.get("max_distance", 16, int), D)
    elif name == "xl":
        encoding = TransformerXL(width, heads)
    elif name == "t5":
        encoding = T5(heads, o.get("buckets", 32, int), o.get("max_distance", 128, int),
                      o.get("bidirectional", False, bool))
    elif name == "rope":
        scaling = RopeScaling(o.get("scaling", "none"), o.get("scale", 1.0, float),
                              o.get("train_length", 0, int), o.get("alpha", 1.0, float),
                              o.get("beta", 32.0, float), o.get("truncate", True, bool))
        encoding = Rotary(D, o.get("base", 10000.0, float), o.get("layout", "adjacent"),
                          o.get("fraction", 1.0, float), scaling)
    elif name == "alibi":
        encoding = Alibi(heads)
    else:
        raise ValueError(f"unknown encoding '{name}'")
    o.check_all_read()
    return encoding
# [registry]


def decoder_from_export(model, parameters):
    """The Decoder that `pe export` describes: `model` is its metadata "model" (a dict), and
    `parameters` its tensors by their C++ names."""
    encoding = make_encoding(model["encoding"], model["encoding_options"], model["width"],
                             model["heads"], model["max_length"])
    decoder = Decoder(model["vocab"], model["width"], model["heads"], model["layers"],
                      model["ffn_width"], encoding, model["layer_norm_eps"], model["causal"],
                      model.get("sink_logits", False))
    load_parameters(decoder, parameters)
    return decoder


# [load]
def load_parameters(decoder, parameters):
    """Copies the C++ parameters into the model. The names are the same but for LayerNorm's
    gamma and beta (PyTorch's weight and bias), and a Linear's weight is [in, out] in C++
    (y = x W + b) but [out, in] in PyTorch (y = x W^T + b)."""
    ours = dict(decoder.named_parameters())  # a shared parameter once, under its first name
    linear = {f"{name}.weight" for name, m in decoder.named_modules() if isinstance(m, nn.Linear)}
    for cpp_name, value in parameters.items():
        stem, _, last = cpp_name.rpartition(".")
        name = stem + "." + {"gamma": "weight", "beta": "bias"}.get(last, last)
        if name not in ours:
            raise ValueError(f"the file's '{cpp_name}' is no parameter of this model")
        parameter = ours.pop(name)
        value = value.t() if name in linear else value
        if parameter.shape != value.shape:
            raise ValueError(f"'{cpp_name}' is {list(value.shape)}, the model's {name} "
                             f"{list(parameter.shape)}")
        with torch.no_grad():
            parameter.copy_(value)
    if ours:
        raise ValueError(f"the file lacks {', '.join(sorted(ours))}")
# [load]
