#!/usr/bin/env bash
# Our training step beside PyTorch's, in one run: the same model, batch and optimiser, for the
# reference model (1 layer) and the 8-layer NoPE model of chapter 7 (same width, 8 layers, no
# encoding). Each side of each model runs in a process of its own, so that the peak resident
# memory each prints belongs to that model alone (libraries loaded included).
# Usage: programs/bench/compare_train_step.sh [BUILD_DIR] [STEPS] [SUMMARY]
#        (or --summary SUMMARY anywhere among the arguments)
# Needs the bench_train_step target built, and Debian's python3-torch for the comparison.
#
# With SUMMARY, also writes a JSON file of what it printed and its numbers by name, written
# whole (to a temporary file, then renamed; appendix A quotes
# chapters/A-performance/results/compare.json): versions and machine (those of our program),
# pytorch (its version), output (the printed lines), and for each model, models.l1 and
# models.l8: threads.<N>.{ours_ms, pytorch_ms, speedup (PyTorch's time over ours),
# ours_of_limit, pytorch_of_limit}, second_thread.{ours, pytorch} (each side's one-thread
# time over its two-thread time), memory.{ours_mb, pytorch_mb, ratio (ours over PyTorch's)};
# and per_block.{ours, pytorch}.{added_ms, ms, fixed_ms, added_mb, mb, fixed_mb}: at one
# thread, what the seven added blocks of the 8-layer model cost in time and peak memory, per
# block, and what is left of the 1-layer model once its one block is taken away.
set -euo pipefail
summary=
positional=()
while [ $# -gt 0 ]; do
  case "$1" in
    --summary) [ $# -ge 2 ] || { echo "compare_train_step: --summary needs a file" >&2; exit 2; }
               summary=$2; shift 2 ;;
    --summary=*) summary=${1#--summary=}; shift ;;
    *) positional+=("$1"); shift ;;
  esac
done
build=${positional[0]:-build/default}
steps=${positional[1]:-20}
[ -z "${positional[2]:-}" ] || summary=${positional[2]}
here=$(cd "$(dirname "$0")" && pwd)
ours="$build/programs/bench/bench_train_step"
[ -x "$ours" ] || { echo "compare_train_step: $ours not found; build the bench_train_step target" >&2; exit 2; }
have_torch=1
if ! /usr/bin/python3 -c "import torch" 2>/dev/null; then
  echo "compare_train_step: python3-torch is not installed (apt-get install python3-torch); ours only"
  have_torch=0
fi
# Each program's numbers, unrounded, for the summary; removed at the end.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The field after "threads N:" and after "peak resident memory:" in a bench's output.
ms_at() { echo "$1" | awk -v t="$2" '$1 == "threads" && $2 == t":" {print $3}'; }
peak_mb() { echo "$1" | awk '/^peak resident memory:/ {print $4}'; }
# The one-thread FMA peak (GFLOP/s) and the step's matmul GFLOP that bench_train_step printed.
peak_gflops() { echo "$1" | awk '/^peak fma:/ {print $4}'; }
step_gflop() { echo "$1" | awk '/^reference step:/ {for (i = 1; i < NF; ++i) if ($(i + 1) == "GFLOP") print $i}'; }

compare() {  # name, layers
  echo "== $1 =="
  local ours_out torch_out
  ours_out=$("$ours" --steps "$steps" --layers "$2" --summary "$work/ours-l$2.json")
  echo "$ours_out"
  [ "$have_torch" = 1 ] || { echo; return; }
  torch_out=$(/usr/bin/python3 "$here/torch_train_step.py" "$steps" "$2" "$work/torch-l$2.json")
  echo "$torch_out"
  for threads in 1 2; do
    awk -v a="$(ms_at "$ours_out" "$threads")" -v b="$(ms_at "$torch_out" "$threads")" -v t="$threads" \
        -v peak="$(peak_gflops "$ours_out")" -v gflop="$(step_gflop "$ours_out")" \
      'BEGIN {printf "threads %d: ours %.1f ms, pytorch %.1f ms: speed-up %.2fx (pytorch time / ours; above 1 means ours is faster)", t, a, b, b / a
              if (peak > 0) printf "; of the limit: ours %.2f, pytorch %.2f", gflop / (a / 1e3) / (peak * t), gflop / (b / 1e3) / (peak * t)
              printf "\n"}'
  done
  awk -v a="$(peak_mb "$ours_out")" -v b="$(peak_mb "$torch_out")" \
    'BEGIN {printf "peak resident memory: ours %.0f MB, pytorch %.0f MB: %.2f of pytorch'"'"'s\n", a, b, a / b}'
  echo
}

{
  compare "reference model: 1 layer, no encoding" 1
  compare "8-layer NoPE model (chapter 7): 8 layers, no encoding" 8
} | tee "$work/output.txt"

[ -n "$summary" ] || exit 0
# The summary, from the programs' own JSON files and the lines printed above.
python3 - "$work" "$summary" "$steps" <<'EOF'
import json
import os
import sys

work, path, steps = sys.argv[1], sys.argv[2], int(sys.argv[3])


def read(name):
    try:
        with open(os.path.join(work, name), encoding="utf-8") as f:
            return json.load(f)
    except OSError:
        return None


with open(os.path.join(work, "output.txt"), encoding="utf-8") as f:
    output = f.read().splitlines()
models, sides = {}, {"ours": {}, "pytorch": {}}  # sides: layers -> (one-thread ms, peak MB)
first = None
for layers in (1, 8):
    ours, torch = read(f"ours-l{layers}.json"), read(f"torch-l{layers}.json")
    first = first or ours
    peak, gflop = ours["peak"]["gflops"], ours["step_gflop"]
    model = {"layers": layers, "peak_gflops": peak, "step_gflop": gflop, "threads": {}}
    for threads in ("1", "2"):
        a = ours["threads"][threads]["ms"]
        at = model["threads"][threads] = {"ours_ms": a}
        if peak > 0:
            at["ours_of_limit"] = gflop / (a / 1e3) / (peak * int(threads))
        if torch:
            b = torch["threads"][threads]["ms"]
            at.update({"pytorch_ms": b, "speedup": b / a})
            if peak > 0:
                at["pytorch_of_limit"] = gflop / (b / 1e3) / (peak * int(threads))
    model["second_thread"] = {"ours": ours["threads"]["1"]["ms"] / ours["threads"]["2"]["ms"]}
    model["memory"] = {"ours_mb": ours["peak_memory_mb"]}
    sides["ours"][layers] = (ours["threads"]["1"]["ms"], ours["peak_memory_mb"])
    if torch:
        model["second_thread"]["pytorch"] = (torch["threads"]["1"]["ms"]
                                             / torch["threads"]["2"]["ms"])
        model["memory"].update({"pytorch_mb": torch["peak_memory_mb"],
                                "ratio": ours["peak_memory_mb"] / torch["peak_memory_mb"]})
        sides["pytorch"][layers] = (torch["threads"]["1"]["ms"], torch["peak_memory_mb"])
    models[f"l{layers}"] = model

# Seven blocks more: their cost per block, and the 1-layer model without its block.
per_block = {}
for side, by_layers in sides.items():
    if len(by_layers) < 2:
        continue
    (ms1, mb1), (ms8, mb8) = by_layers[1], by_layers[8]
    per_block[side] = {"added_ms": ms8 - ms1, "ms": (ms8 - ms1) / 7,
                       "fixed_ms": ms1 - (ms8 - ms1) / 7,
                       "added_mb": mb8 - mb1, "mb": (mb8 - mb1) / 7,
                       "fixed_mb": mb1 - (mb8 - mb1) / 7}

torch_any = read("torch-l1.json")
summary = {"program": "compare_train_step.sh", "steps": steps,
           "versions": first["versions"], "machine": first["machine"],
           "pytorch": torch_any["pytorch"] if torch_any else None,
           "output": output, "models": models, "per_block": per_block}
temporary = f"{path}.{os.getpid()}.tmp"
with open(temporary, "w", encoding="utf-8") as f:
    json.dump(summary, f, indent=1, sort_keys=True)
    f.write("\n")
os.replace(temporary, path)
print(f"summary in {path}", file=sys.stderr)
EOF
