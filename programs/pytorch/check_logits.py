#!/usr/bin/env python3
"""Recomputes the logits of models that `pe export` wrote, in PyTorch (decoder.py), and
compares them with the C++ forward pass's logits stored beside the parameters.

    check_logits.py FILE.safetensors... [--tolerance 1e-5] [--dtype float32|float64]
                    [--summary FILE.json] [--perturb alibi-slopes|rope-angles]

Prints the largest absolute difference per file; exits 1 when one exceeds the tolerance, 2 when
a file cannot be read. --summary writes the measurements as JSON (appendix D quotes them).
--perturb makes one encoding 1% wrong on purpose (PERTURBATIONS): the check must then fail.
"""
import argparse
import json
import math
import os
import struct
import sys
from pathlib import Path

try:
    import torch
except ImportError:
    sys.exit(f"check_logits: {sys.executable} has no PyTorch; use a Python that has it "
             "(Debian: /usr/bin/python3 after scripts/install-deps.sh --torch)")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import decoder  # noqa: E402

# Mistakes made on purpose, to show that the check catches a small error in an encoding: each
# changes one function of decoder.py, and export_and_check.py expects the check to fail.
PERTURBATIONS = {
    "alibi-slopes": ("alibi_slopes", lambda slopes: lambda H: [1.01 * m for m in slopes(H)]),
    "rope-angles": ("rope_frequencies", lambda theta: lambda d, base: 1.01 * theta(d, base)),
}


# [read-safetensors]
DTYPES = {"F32": torch.float32, "F64": torch.float64, "I64": torch.int64}


def read_safetensors(path):
    """The tensors (by name, in file order) and the metadata of a safetensors file: 8 bytes of
    header length (little-endian), the JSON header, then the values back to back."""
    data = Path(path).read_bytes()
    if len(data) < 8:
        raise ValueError("shorter than the 8 bytes of its header length")
    (length,) = struct.unpack("<Q", data[:8])
    if 8 + length > len(data):
        raise ValueError(f"a header of {length} bytes does not fit in {len(data)} bytes")
    header = json.loads(data[8:8 + length])
    metadata = header.pop("__metadata__", {})
    values = data[8 + length:]
    tensors, end = {}, 0
    for name, entry in header.items():
        begin, stop = entry["data_offsets"]
        dtype, shape = DTYPES[entry["dtype"]], entry["shape"]
        size = math.prod(shape) * torch.empty(0, dtype=dtype).element_size()
        if begin != end or stop - begin != size:  # back to back, each exactly its size
            raise ValueError(f"'{name}' has offsets {begin}, {stop} after {end}; its "
                             f"{entry['dtype']} {shape} take {size} bytes")
        raw = bytearray(values[begin:stop])  # a copy: writable and aligned
        tensors[name] = torch.frombuffer(raw, dtype=dtype).reshape(shape) if size else \
            torch.empty(shape, dtype=dtype)
        end = stop
    if end != len(values):
        raise ValueError(f"{len(values) - end} bytes after the last tensor")
    return tensors, metadata
# [read-safetensors]


# [check]
def check(path, dtype):
    """The file's metadata, the largest |logit| and the largest difference."""
    tensors, metadata = read_safetensors(path)
    tokens, expected = tensors.pop("check.tokens"), tensors.pop("check.logits")
    model = decoder.decoder_from_export(json.loads(metadata["model"]), tensors).to(dtype)
    with torch.no_grad():
        logits = model(tokens)  # [B, T, V]
    difference = (logits.double() - expected.double()).abs().max().item()
    return metadata, expected.abs().max().item(), difference
# [check]


def scientific(x):  # 4.8e-7, as the book's value markers write it
    mantissa, exponent = f"{x:.1e}".split("e")
    return f"{mantissa}e{int(exponent)}"


def describe(model):
    options = " ".join(f"{k}={v}" for k, v in sorted(model["encoding_options"].items()))
    return f"{model['encoding']} {options}".strip()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="+", metavar="FILE.safetensors")
    parser.add_argument("--tolerance", type=float, default=1e-5,
                        help="the largest absolute difference allowed (default 1e-5)")
    parser.add_argument("--dtype", choices=["float32", "float64"], default="float32",
                        help="PyTorch's precision (the C++ logits are float32)")
    parser.add_argument("--summary", help="write the measurements to this JSON file")
    parser.add_argument("--perturb", choices=sorted(PERTURBATIONS),
                        help="make this part of an encoding 1%% wrong (the check must fail)")
    args = parser.parse_args()
    if args.perturb:
        function, wrong = PERTURBATIONS[args.perturb]
        setattr(decoder, function, wrong(getattr(decoder, function)))
    torch.set_num_threads(1)  # the same sums on any machine; the models are small
    dtype = getattr(torch, args.dtype)

    rows, worst, failed = [], 0.0, False
    print(f"PyTorch {torch.__version__}, {args.dtype}, tolerance {args.tolerance:g}"
          + (f", perturbed: {args.perturb}" if args.perturb else ""))
    for path in args.files:
        try:
            metadata, largest, difference = check(path, dtype)
            model, check_input = json.loads(metadata["model"]), json.loads(metadata["check"])
        except (OSError, ValueError, KeyError, TypeError, RuntimeError) as e:
            print(f"check_logits: {path}: {e}", file=sys.stderr)
            sys.exit(2)
        ok = difference <= args.tolerance
        failed = failed or not ok
        worst = max(worst, difference)
        name = Path(path).name.removesuffix(".safetensors")
        versions = json.loads(metadata.get("versions", "{}"))  # of the build that exported
        rows.append({"file": name, "encoding": describe(model), "heads": model["heads"],
                     "length": check_input["length"], "max_abs_logit": largest,
                     "max_error": difference, "ok": ok})
        print(f"{name:24} max |logit| {largest:5.2f}  max error {difference:.1e}  "
              f"{'ok    ' if ok else 'FAILED'}  ({describe(model)}, {model['heads']} heads, "
              f"length {check_input['length']})")
    print(f"{len(rows)} files, largest error {worst:.2e}: "
          f"{'every one within' if not failed else 'NOT all within'} {args.tolerance:g}")
    if args.summary:
        table = ["| model | encoding and options | heads | length | max abs logit "
                 "| max abs error |", "|---|---|---:|---:|---:|---:|"]
        table += [f"| {r['file']} | {r['encoding']} | {r['heads']} | {r['length']} | "
                  f"{r['max_abs_logit']:.2f} | {scientific(r['max_error'])} |" for r in rows]
        summary = {"versions": {**versions, "torch": torch.__version__}, "dtype": args.dtype,
                   "tolerance": args.tolerance, "perturbation": args.perturb, "files": len(rows),
                   "max_error": worst, "min_error": min(r["max_error"] for r in rows),
                   "table": table, "rows": rows}
        Path(args.summary).write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
