#!/usr/bin/env python3
"""The reference training step in PyTorch, for programs/bench/compare_train_step.sh.

The same model as chapter 1's pe::Decoder with the reference configuration (1 head, width 256,
feed-forward 1024, ReLU, pre-LayerNorm, vocabulary 26, no positional encoding) and 1 layer or
the number given, batch 64, length 32: forward, cross-entropy, backward and an AdamW step.

    torch_train_step.py [STEPS] [LAYERS] [SUMMARY]

Prints one line per thread count, "threads N: X ms/step", then this process's peak resident
memory, "peak resident memory: M MB" (run one process per model so the peaks do not mix).
With SUMMARY, also writes the same numbers unrounded to that JSON file (written whole):
{"pytorch": version, "steps", "layers", "threads": {"1": {"ms": ...}, "2": ...},
"peak_memory_mb"}.
"""
import json
import math
import os
import resource
import sys
import time

import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, width, heads, ffn):
        super().__init__()
        self.heads = heads
        self.norm1 = nn.LayerNorm(width)
        self.query = nn.Linear(width, width)
        self.key = nn.Linear(width, width)
        self.value = nn.Linear(width, width)
        self.output = nn.Linear(width, width)
        self.norm2 = nn.LayerNorm(width)
        self.expand = nn.Linear(width, ffn)
        self.contract = nn.Linear(ffn, width)

    def attention(self, x):
        B, T, C = x.shape
        H, D = self.heads, C // self.heads
        split = lambda t: t.view(B, T, H, D).transpose(1, 2)
        q, k, v = split(self.query(x)), split(self.key(x)), split(self.value(x))
        scores = q @ k.transpose(2, 3) / math.sqrt(D)
        mask = torch.ones(T, T, dtype=torch.bool).triu(1)
        weights = scores.masked_fill(mask, float("-inf")).softmax(-1)
        return self.output((weights @ v).transpose(1, 2).reshape(B, T, C))

    def forward(self, x):
        h = x + self.attention(self.norm1(x))
        return h + self.contract(torch.relu(self.expand(self.norm2(h))))


class Decoder(nn.Module):
    def __init__(self, vocab=26, width=256, heads=1, ffn=1024, layers=1):
        super().__init__()
        self.tokens = nn.Embedding(vocab, width)
        self.blocks = nn.ModuleList(Block(width, heads, ffn) for _ in range(layers))
        self.final_norm = nn.LayerNorm(width)
        self.head = nn.Linear(width, vocab)

    def forward(self, ids):
        x = self.tokens(ids)
        for block in self.blocks:
            x = block(x)
        return self.head(self.final_norm(x))


def median_ms(threads, steps, layers):
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    model = Decoder(layers=layers)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    times = []
    for s in range(steps + 2):
        ids = torch.randint(0, 26, (64, 32))
        targets = torch.randint(0, 26, (64 * 32,))
        start = time.perf_counter()
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(ids).view(-1, 26), targets)
        loss.backward()
        optimizer.step()
        if s >= 2:
            times.append((time.perf_counter() - start) * 1e3)
    times.sort()
    return times[len(times) // 2]


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    layers = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    summary_path = sys.argv[3] if len(sys.argv) > 3 else None
    print(f"pytorch {torch.__version__}, {layers} layers")
    summary = {"pytorch": torch.__version__, "steps": steps, "layers": layers, "threads": {}}
    for threads in (1, 2):
        ms = median_ms(threads, steps, layers)
        print(f"threads {threads}: {ms:8.1f} ms/step")
        summary["threads"][str(threads)] = {"ms": ms}
    # Linux gives ru_maxrss in kilobytes.
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak resident memory: {peak_mb:.0f} MB")
    summary["peak_memory_mb"] = peak_mb
    if summary_path:
        temporary = f"{summary_path}.{os.getpid()}.tmp"
        with open(temporary, "w", encoding="utf-8") as f:
            json.dump(summary, f, indent=1)
            f.write("\n")
        os.replace(temporary, summary_path)


if __name__ == "__main__":
    main()
