#!/usr/bin/env bash
# Our training step beside PyTorch's, in one run: the same model, batch and optimiser, for the
# reference model (1 layer) and the 8-layer NoPE model of chapter 7 (same width, 8 layers, no
# encoding). Each side of each model runs in a process of its own, so that the peak resident
# memory each prints belongs to that model alone (libraries loaded included).
# Usage: programs/bench/compare_train_step.sh [BUILD_DIR] [STEPS]
# Needs the bench_train_step target built, and Debian's python3-torch for the comparison.
set -euo pipefail
build=${1:-build/default}
steps=${2:-20}
here=$(cd "$(dirname "$0")" && pwd)
ours="$build/programs/bench/bench_train_step"
[ -x "$ours" ] || { echo "compare_train_step: $ours not found; build the bench_train_step target" >&2; exit 2; }
have_torch=1
if ! /usr/bin/python3 -c "import torch" 2>/dev/null; then
  echo "compare_train_step: python3-torch is not installed (apt-get install python3-torch); ours only"
  have_torch=0
fi

# The field after "threads N:" and after "peak resident memory:" in a bench's output.
ms_at() { echo "$1" | awk -v t="$2" '$1 == "threads" && $2 == t":" {print $3}'; }
peak_mb() { echo "$1" | awk '/^peak resident memory:/ {print $4}'; }
# The one-thread FMA peak (GFLOP/s) and the step's matmul GFLOP that bench_train_step printed.
peak_gflops() { echo "$1" | awk '/^peak fma:/ {print $4}'; }
step_gflop() { echo "$1" | awk '/^reference step:/ {for (i = 1; i < NF; ++i) if ($(i + 1) == "GFLOP") print $i}'; }

compare() {  # name, layers
  echo "== $1 =="
  local ours_out torch_out
  ours_out=$("$ours" --steps "$steps" --layers "$2")
  echo "$ours_out"
  [ "$have_torch" = 1 ] || { echo; return; }
  torch_out=$(/usr/bin/python3 "$here/torch_train_step.py" "$steps" "$2")
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

compare "reference model: 1 layer, no encoding" 1
compare "8-layer NoPE model (chapter 7): 8 layers, no encoding" 8
