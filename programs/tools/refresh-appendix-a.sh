#!/bin/sh
# Reruns everything appendix A (chapters/A-performance/README.md) quotes, with the commands the
# appendix shows, writes the summaries it quotes to chapters/A-performance/results/ and the
# roofline figure to chapters/A-performance/figures/, then regenerates the appendix's blocks and
# marked numbers. Run from the top of the repository, on a quiet machine (nothing else running:
# every number is a speed), after a build:
#
#   programs/tools/refresh-appendix-a.sh [build-dir]        (default build/default)
#
# It builds what it runs first (chA_experiment, bench_matmul, bench_train_step, kernel_tests),
# so that the programs are those of the committed sources. The summaries:
#   summary.json     chA_experiment with the appendix's options (sections 1 and 4)
#   matmul.json      bench_matmul with the command of section 2
#   simd.json        the loop of section 3: chA_experiment --repetitions 3 under PE_SIMD for
#                    each path (output: the lines the loop prints; paths.<path>: that run's
#                    summary without its output)
#   qemu.json        the kernel tests under qemu's Nehalem, as section 3 runs them (skipped,
#                    keeping the committed file, without qemu-x86_64)
#   train_step.json  bench_train_step --steps 20 --profile (section 5)
#   compare.json     programs/bench/compare_train_step.sh with 20 steps (section 6)
# It took 10 to 14 minutes on a loaded 2-core machine (PyTorch's 8-layer model at two threads
# is the longest part; the qemu run about 2 minutes). Afterwards, read the sentences around every number that changed (`git diff`):
# the text must still say what the runs show; and where the machine is another than the one the
# appendix's note [^machine] describes (each summary records it), that note and the sentences
# that name the CPU must follow.
set -eu
build=${1:-build/default}
results=chapters/A-performance/results
started=$(date +%s)

# Every number must trace to a commit: the programs record the commit of their sources, and the
# results check refuses a summary from a tree with uncommitted changes; refuse to start here.
if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
  echo "refresh-appendix-a: the tree has uncommitted changes (git status); commit them first," \
       "so that every result names the commit it comes from" >&2
  exit 1
fi
cmake --build "$build" --target chA_experiment bench_matmul bench_train_step kernel_tests
mkdir -p "$results"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
experiment=$build/chapters/A-performance/chA_experiment

# Sections 1 and 4, and the roofline figure (the CSV files stay in results/chA, as the appendix
# says).
"$experiment" --out results/chA --summary "$results/summary.json"
if [ -f results/chA/roofline.png ]; then
  cp results/chA/roofline.png chapters/A-performance/figures/roofline.png
else
  echo "refresh-appendix-a: no roofline.png (gnuplot missing?); kept the committed figure" >&2
fi

# Section 2.
"$build/programs/bench/bench_matmul" --benchmark_repetitions=5 \
  --benchmark_enable_random_interleaving=true --summary="$results/matmul.json"

# Section 3: every SIMD path with the same binary, as the loop the appendix shows.
for path in avx512 avx2 sse2 scalar; do
  if ! PE_SIMD=$path "$experiment" --repetitions 3 --out "$work/chA-$path" \
         --summary "$work/simd-$path.json"; then
    echo "refresh-appendix-a: PE_SIMD=$path failed: section 3 needs a CPU that runs all four" \
         "paths (AVX-512)" >&2
    exit 1
  fi
done
python3 - "$work" "$results/simd.json" <<'EOF'
import json
import os
import re
import sys

work, path = sys.argv[1], sys.argv[2]
shown = re.compile(r"^SIMD|q/k/v/out|layer norm  ")  # the loop's grep -E
summary = {"command": "PE_SIMD=<path> chA_experiment --repetitions 3, for each path",
           "output": [], "paths": {}}
for name in ("avx512", "avx2", "sse2", "scalar"):
    with open(os.path.join(work, f"simd-{name}.json"), encoding="utf-8") as f:
        run = json.load(f)
    summary["output"] += [line for line in run.pop("output") if shown.search(line)]
    summary["paths"][name] = run
    summary.setdefault("versions", run["versions"])
    summary.setdefault("machine", run["machine"])
temporary = f"{path}.{os.getpid()}.tmp"
with open(temporary, "w", encoding="utf-8") as f:
    json.dump(summary, f, indent=1, sort_keys=True)
    f.write("\n")
os.replace(temporary, path)
EOF

# Section 3: the kernel tests on an emulated CPU without AVX2, as the appendix runs them.
if command -v qemu-x86_64 >/dev/null; then
  if ! ctest --test-dir "$build" -R KernelTestsOnCpuWithoutAvx2 --output-on-failure -V \
         >"$work/qemu-ctest.txt"; then
    cat "$work/qemu-ctest.txt" >&2
    echo "refresh-appendix-a: KernelTestsOnCpuWithoutAvx2 failed" >&2
    exit 1
  fi
  grep -E "SIMD path|PASSED|Passed" "$work/qemu-ctest.txt" >"$work/qemu.txt"
  python3 - "$work/qemu.txt" "$results/qemu.json" "$(git rev-parse --short HEAD)" <<'EOF'
import json
import os
import sys

lines, path, commit = sys.argv[1], sys.argv[2], sys.argv[3]
with open(lines, encoding="utf-8") as f:
    output = f.read().splitlines()
summary = {"command": "ctest -R KernelTestsOnCpuWithoutAvx2 -V | grep -E 'SIMD path|PASSED|Passed'",
           "versions": {"git_commit": commit}, "output": output}
temporary = f"{path}.{os.getpid()}.tmp"
with open(temporary, "w", encoding="utf-8") as f:
    json.dump(summary, f, indent=1)
    f.write("\n")
os.replace(temporary, path)
EOF
else
  echo "refresh-appendix-a: qemu-x86_64 not found (scripts/install-deps.sh --qemu);" \
       "kept the committed $results/qemu.json" >&2
fi

# Sections 5 and 6.
"$build/programs/bench/bench_train_step" --steps 20 --profile --summary "$results/train_step.json"
programs/bench/compare_train_step.sh "$build" 20 --summary "$results/compare.json"

programs/tools/results.py update chapters/A-performance/README.md
echo "refresh-appendix-a: done in $(( $(date +%s) - started )) s; read the sentences around" \
     "every number that changed (git diff chapters/A-performance)"
