#!/usr/bin/env python3
"""The test behind `ctest -L pytorch`: trains a tiny model of every encoding and option of the
book with `pe train` (10 steps), writes each with `pe export`, and recomputes their logits in
PyTorch (check_logits.py), past the training length where the encoding can go.

    export_and_check.py --pe build/default/pe --work DIR [--python PYTHON] [--summary FILE]

--python names an interpreter that can import torch (CMake looks for one). Without PyTorch the
test is skipped with a note (exit 77), unless the environment says CI=true or --require-torch
is given (CMake's option PE_REQUIRE_TORCH=ON gives it): then it fails, so that CI cannot pass
without the check. Takes a few seconds.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

SKIPPED = 77  # ctest's SKIP_RETURN_CODE

# The tiny model every run shares unless its options say otherwise: 2 layers of 2 heads,
# trained at length 16 for 10 steps.
TRAIN = {"--task": "shiftk", "--width": "32", "--heads": "2", "--layers": "2", "--ffn": "64",
         "--length": "16", "--batch": "8", "--steps": "10", "--warmup": "2",
         "--eval-every": "10", "--eval-sequences": "8", "--seed": "1"}
TRAIN_LENGTH = 16
CHECK_LENGTH = 32  # twice the training length: RoPE's scaling rules act only past it

# [variants]
# name: (the run's encoding and options, the options pe export replaces). Runs that differ only
# in what export replaces (RoPE's scaling rules, chosen after training) share one training.
L = f"train_length={TRAIN_LENGTH}"
VARIANTS = {
    "none": ("-e none", ""),
    "sinusoidal": ("-e sinusoidal", ""),
    "sinusoidal-concatenated": ("-e sinusoidal -o layout=concatenated -o base=500", ""),
    "learned": (f"-e learned --max-length {CHECK_LENGTH}", ""),
    "shaw": ("-e shaw -o max_distance=4", ""),
    "shaw-pairwise": ("-e shaw -o max_distance=4 -o pairwise=true", ""),
    "xl": ("-e xl", ""),
    "t5": ("-e t5 -o buckets=8 -o max_distance=20", ""),
    "t5-bidirectional": ("-e t5 -o buckets=8 -o max_distance=20 -o bidirectional=true", ""),
    "rope": ("-e rope", ""),
    "rope-half-partial": ("-e rope -o layout=half -o base=500 -o fraction=0.5", ""),
    "rope-linear": ("-e rope", "-o scaling=linear -o scale=2"),
    "rope-ntk": ("-e rope", "-o scaling=ntk -o scale=2"),
    "rope-dynamic": ("-e rope", f"-o scaling=dynamic -o {L}"),
    "rope-dynamic-scale": ("-e rope", f"-o scaling=dynamic -o scale=2 -o {L}"),
    "rope-yarn": ("-e rope", f"-o scaling=yarn -o scale=2 -o {L}"),
    "rope-yarn-untruncated": ("-e rope",
                              f"-o scaling=yarn -o scale=2 -o {L} -o truncate=false "
                              "-o alpha=2 -o beta=16"),
    "rope-yarn-paper": ("-e rope", f"-o scaling=yarn-paper -o scale=2 -o {L}"),
    "rope-half-yarn": ("-e rope -o layout=half -o base=500 -o fraction=0.5",
                       f"-o scaling=yarn -o scale=4 -o {L}"),
    "alibi": ("-e alibi", ""),
    "alibi-3-heads": ("-e alibi --heads 3 --width 48", ""),
    "rope-sink-logits": ("-e rope --sink-logits", ""),
    "alibi-sink-logits": ("-e alibi --sink-logits", ""),
}
# [variants]


def torch_python(candidate):
    """candidate if it can import torch, else None."""
    if not candidate:
        return None
    try:
        done = subprocess.run([candidate, "-c", "import torch"], capture_output=True, timeout=120)
    except OSError:
        return None
    return candidate if done.returncode == 0 else None


def run(command):
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"export_and_check: {' '.join(command)} failed:\n{done.stdout}{done.stderr}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pe", required=True, help="the pe program")
    parser.add_argument("--work", required=True, help="a scratch folder (emptied first)")
    parser.add_argument("--python", default="", help="an interpreter with PyTorch")
    parser.add_argument("--summary", help="check_logits.py's JSON summary goes here")
    parser.add_argument("--require-torch", action="store_true",
                        help="fail, rather than skip, without PyTorch (as CI=true does)")
    args = parser.parse_args()

    python = torch_python(args.python)
    if python is None:
        required = args.require_torch or os.environ.get("CI") == "true"
        where = f"{args.python} cannot import torch" if args.python else "none found by CMake"
        note = (f"no PyTorch ({where}): scripts/install-deps.sh --torch installs it "
                "(Debian's python3-torch)")
        if required:
            sys.exit(f"export_and_check: {note}; CI=true and PE_REQUIRE_TORCH=ON need it")
        print(f"export_and_check: skipped, {note}")
        sys.exit(SKIPPED)

    work = Path(args.work)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    trained = {}  # the run's options -> its checkpoint
    files = []
    for name, (run_options, export_options) in VARIANTS.items():
        if run_options not in trained:
            out = work / f"run-{len(trained)}"
            words = run_options.split()
            sizes = {**TRAIN, **{k: v for k, v in zip(words, words[1:]) if k in TRAIN}}
            rest = [w for i, w in enumerate(words)
                    if w not in TRAIN and (i == 0 or words[i - 1] not in TRAIN)]
            run([args.pe, "train", *[w for pair in sizes.items() for w in pair], *rest,
                 "--quiet", "--no-figures", "--out", str(out)])
            trained[run_options] = out / "checkpoint.agt"
        file = work / f"{name}.safetensors"
        run([args.pe, "export", str(trained[run_options]), "--out", str(file),
             "--length", str(CHECK_LENGTH), *export_options.split()])
        files.append(str(file))
    check = [python, "-B", str(Path(__file__).with_name("check_logits.py"))]
    summary = Path(args.summary) if args.summary else work / "summary.json"
    status = subprocess.run([*check, *files, "--summary", str(summary)]).returncode
    if status != 0:
        sys.exit(status)

    # The same in float64: what remains is the rounding of the C++ float32 logits.
    exact = work / "float64.json"
    status = subprocess.run([*check, *files, "--dtype", "float64", "--summary", str(exact)])
    if status.returncode != 0:
        sys.exit(status.returncode)

    # [perturbed]
    # The check must fail when an encoding is 1% wrong: ALiBi's slopes, RoPE's angles.
    perturbed = {}
    for perturbation, prefix in (("alibi-slopes", "alibi"), ("rope-angles", "rope")):
        chosen = [f for f in files if Path(f).name.startswith(prefix)]
        result = work / f"perturbed-{perturbation}.json"
        print(f"export_and_check: now with {perturbation} 1% wrong, which the check must catch:",
              flush=True)
        status = subprocess.run([*check, *chosen, "--perturb", perturbation,
                                 "--summary", str(result)]).returncode
        if status != 1:
            sys.exit(f"export_and_check: with {perturbation} 1% wrong the check should fail "
                     f"(exit 1), but it exited {status}")
        perturbed[perturbation] = json.loads(result.read_text(encoding="utf-8"))
    # [perturbed]
    merged = json.loads(summary.read_text(encoding="utf-8"))
    float64 = json.loads(exact.read_text(encoding="utf-8"))
    merged["float64"] = {key: float64[key] for key in ("files", "min_error", "max_error")}
    merged["perturbed"] = {name: {key: p[key] for key in ("files", "min_error", "max_error",
                                                          "table")}
                           for name, p in perturbed.items()}
    summary.write_text(json.dumps(merged, indent=2) + "\n", encoding="utf-8")
    print("export_and_check: every model matches, and both perturbed encodings fail the check")


if __name__ == "__main__":
    main()
