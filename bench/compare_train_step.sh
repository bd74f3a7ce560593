#!/usr/bin/env bash
# Our training step beside PyTorch's, in one run: the same model, batch and optimiser.
# Usage: bench/compare_train_step.sh [BUILD_DIR] [STEPS]
# Needs the bench_train_step target built, and Debian's python3-torch for the comparison.
set -euo pipefail
build=${1:-build/default}
steps=${2:-20}
here=$(cd "$(dirname "$0")" && pwd)
ours="$build/bench/bench_train_step"
[ -x "$ours" ] || { echo "compare_train_step: $ours not found; build the bench_train_step target" >&2; exit 2; }

ours_out=$("$ours" --steps "$steps")
echo "$ours_out"
if ! /usr/bin/python3 -c "import torch" 2>/dev/null; then
  echo "compare_train_step: python3-torch is not installed (apt-get install python3-torch); no comparison"
  exit 0
fi
torch_out=$(/usr/bin/python3 "$here/torch_train_step.py" "$steps")
echo "$torch_out"
for threads in 1 2; do
  a=$(echo "$ours_out" | awk -v t="$threads" '$1 == "threads" && $2 == t":" {print $3}')
  b=$(echo "$torch_out" | awk -v t="$threads" '$1 == "threads" && $2 == t":" {print $3}')
  awk -v a="$a" -v b="$b" -v t="$threads" \
    'BEGIN {printf "threads %d: ours %.1f ms, pytorch %.1f ms: speed-up %.2fx (pytorch time / ours; above 1 means ours is faster)\n", t, a, b, b / a}'
done
