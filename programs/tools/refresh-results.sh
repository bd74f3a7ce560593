#!/bin/sh
# Reruns everything the book quotes with the current build and regenerates the quoted numbers:
# the full `pe table` (with its extrapolation table), then each chapter's experiment writing its
# committed summary (chapters 0 and 1 too, which train nothing of the table's), then the
# chapters' figures, then appendix D's PyTorch check, then the blocks and marked numbers of the
# READMEs. Run from the top of the repository, after a build:
#
#   programs/tools/refresh-results.sh [build-dir]        (default build/default)
#
# Finished runs are reused (same configuration, field by field), so an interrupted call can be
# repeated. The chapters' one-layer reference runs have exactly the table's configuration, so
# they are copied from results/table/ instead of being trained twice; the chapters' other runs
# (chapter 6's 8 heads, chapter 7's 8 layers) train in their experiments. Afterwards, read the
# sentences around every number that changed (`git diff`): the text must still say what the
# runs show.
#
# Appendix A's numbers are speeds, not training runs: programs/tools/refresh-appendix-a.sh
# reruns them (on a quiet machine) and writes chapters/A-performance/results/; this script only
# regenerates the appendix's quotes from the summaries committed there.
set -eu
build=${1:-build/default}

# Every number must trace to a commit: the runs record the commit of their sources, and the
# results check refuses a summary from a tree with uncommitted changes; refuse to start here.
if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
  echo "refresh-results: the tree has uncommitted changes (git status); commit them first," \
       "so that every result names the commit it comes from" >&2
  exit 1
fi

"$build/pe" table --reuse --jobs 2 --lengths 32,64,128,256,512
programs/tools/results.py import-table results/table/table.md results/table/table.json \
  lab/results/table.json
cp results/table/lengths.json lab/results/lengths.json
# Part II's encodings on the same reference tasks, chapter by chapter: each quotes its own.
"$build/pe" table --encodings kerple,fire,dpb,xpos --reuse --jobs 2 --out results/table-part2
programs/tools/results.py import-table results/table-part2/table.md results/table-part2/table.json \
  chapters/09-learned-distance/results/table.json
"$build/pe" table --encodings cope,fox --reuse --jobs 2 --out results/table-ch10
programs/tools/results.py import-table results/table-ch10/table.md results/table-ch10/table.json \
  chapters/10-content-positions/results/table.json

# copy <table run> <chapter run folder>: the table's run, where the chapter's experiment looks.
copy() {
  if [ ! -f "results/$2/run.json" ]; then
    mkdir -p "results/$2"
    cp -r "results/table/$1/." "results/$2/"
  fi
}
for task in shiftk alternating; do
  copy "sinusoidal-$task-l1" "ch02/$task"
  copy "learned-$task-l1" "ch03/$task"
  for encoding in shaw xl t5; do copy "$encoding-$task-l1" "ch04/${encoding}_$task"; done
  copy "rope-$task-l1" "ch05/$task"
  copy "alibi-$task-l1" "ch06/$task-h1"
  copy "none-$task-l1" "ch07/$task-l1"
done

for chapter in 00-autograd 01-attention 02-sinusoidal 03-learned 04-relative 05-rope 06-alibi \
               07-nope 08-length 09-learned-distance 10-content-positions 11-todays-models \
               12-inference; do
  number=${chapter%%-*}
  "$build/chapters/$chapter/ch${number}_experiment" --summary "chapters/$chapter/results/summary.json"
done

# Chapter 11's example configs as `pe inspect rope --hf-config` explains them: the chapter
# quotes two, and its tests check that every one is what the code prints now.
python3 - "$build/pe" chapters/11-todays-models/configs chapters/11-todays-models/results/configs.json <<'EOF'
import json, os, subprocess, sys
pe, folder, out = sys.argv[1:]
tables = {}
for name in sorted(f[:-5] for f in os.listdir(folder) if f.endswith(".json")):
    text = subprocess.run([pe, "inspect", "rope", "--hf-config", os.path.join(folder, name + ".json")],
                          check=True, capture_output=True, text=True).stdout
    tables[name] = text.rstrip("\n").split("\n")  # quoted in a fenced block
with open(out + ".tmp", "w") as f:
    json.dump({"tables": tables}, f, indent=1)
    f.write("\n")
os.replace(out + ".tmp", out)
EOF

# The figures each chapter shows, from the runs just made: figures/attention_X.png is the
# heatmap of the run in results/chNN/X/ (X_hN: the run X-hN, chapter 6's heads), every other
# figures/Y.png the experiment's own Y.png.
for chapter in 02-sinusoidal 03-learned 04-relative 05-rope 06-alibi 07-nope 08-length \
               09-learned-distance 10-content-positions 11-todays-models 12-inference; do
  number=${chapter%%-*}
  for figure in chapters/$chapter/figures/*.png; do
    name=$(basename "$figure" .png)
    run=results/ch$number/$(echo "${name#attention_}" | sed 's/_h\([0-9]\)$/-h\1/')/attention.png
    if [ "${name#attention_}" != "$name" ] && [ -f "$run" ]; then
      cp "$run" "$figure"
    elif [ -f "results/ch$number/$name.png" ]; then
      cp "results/ch$number/$name.png" "$figure"
    else
      echo "refresh-results: no new $figure (kept the committed one)" >&2
    fi
  done
done

# Appendix D: the PyTorch check writes its summary into the build folder (no PyTorch: skipped).
rm -f "$build/programs/pytorch/check/summary.json"
ctest --test-dir "$build" -L pytorch --output-on-failure
if [ -f "$build/programs/pytorch/check/summary.json" ]; then
  cp "$build/programs/pytorch/check/summary.json" chapters/D-pytorch/results/summary.json
else
  echo "refresh-results: no PyTorch, so appendix D keeps its committed summary" >&2
fi

programs/tools/results.py update README.md chapters/*/README.md
