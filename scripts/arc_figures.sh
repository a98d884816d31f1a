#!/usr/bin/env bash
# Measures the ARC-Decode figures quoted in docs/benchmarks.md and keeps the raw outputs in reports/bench/:
#   1. calibrate arc on the large demo pair on the paper's candidate samples (--sites candidates: all
#      181 calibration prompts, 4 audit prompts per workload category, T = 1), then audit arc
#      (constants and held-out coverage recomputed), and the same calibration under the split rule
#      (the default, on-policy calibration at the deploy sites is scripts/workflow.sh's);
#   2. arc and its ablations against sd-tree and AR at T = 1 with the papers' fixed tree (16 nodes,
#      depth 5), with deploy traces and the run-time coverage audit; the same with the auto budget;
#   3. the same methods at T = 0 (fixed tree): the lossless pruning ablation with the T = 1 artifact,
#      then all of them with an artifact calibrated at T = 0;
#   4. the draft tree's cost: sd-tree and sd at T = 0, fixed budgets, with traces (draft_ms).
# Run on a quiet machine (docs/benchmarks.md, *The machine*). Needs a built specd (scripts/build.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
specd=build/cli/specd
out=reports/bench
artifact=${ARTIFACT:-artifacts/demo-large-arc}
prompts=${MAX_PROMPTS:-10}
repeats=${METHOD_REPEATS:-3}
t=data/models/demo-large-target
d=data/models/demo-large-draft
source scripts/lib/machine_stamp.sh
mkdir -p "$out"
# Runs a command with the machine stamp first, its output kept in the file named first.
stamped() { local file=$1; shift; { machine_stamp; "$@"; } | tee "$file"; }

rm -rf "$artifact" "$artifact".*-journal.sqlite
echo "== specd calibrate arc ==" >&2
stamped "$out/calibrate-arc.txt" "$specd" calibrate arc --target $t --draft $d --temperature 1 --sites candidates --out "$artifact"
stamped "$out/audit-arc.txt" "$specd" audit arc --artifact "$artifact"
# The same samples under the split rule (ratios at delta / 2): the coverage JS <= U_min is meant to have.
rm -rf "$artifact-split" "$artifact-split".*-journal.sqlite
stamped "$out/calibrate-arc-split.txt" "$specd" calibrate arc --target $t --draft $d --temperature 1 --sites candidates --rule split --out "$artifact-split"

methods=sd-tree,arc,arc-prune-only,arc-lts-only
for run in t1-fixed t1-auto t0-fixed; do
  temperature=${run%%-*}; temperature=${temperature#t}
  budget=${run##*-}
  option=()
  # Constants are calibrated for T = 1: at T = 0 only the lossless pruning ablation can deploy.
  [ "$temperature" = 0 ] && methods_here=sd-tree,arc-prune-only || { methods_here=$methods; option=(--artifact "$artifact"); }
  echo "== specd bench --methods $methods_here (T=$temperature, --draft-budget $budget) ==" >&2
  rm -f "$out/arc-$run.sqlite"
  stamped "$out/arc-$run.txt" "$specd" bench --model $t --draft $d --methods "$methods_here" "${option[@]}" --temperature "$temperature" --draft-budget "$budget" \
    --max-prompts "$prompts" --repeats "$repeats" --json "$out/arc-$run.json" --traces "$out/arc-$run.sqlite"
  if [ "$temperature" = 1 ]; then
    stamped "$out/audit-arc-deploy-$run.txt" "$specd" audit arc --artifact "$artifact" --traces "$out/arc-$run.sqlite" || [ $? -eq 1 ]
  fi
done

# Greedy: constants calibrated at T = 0 (the point mass makes U_logit_raw one constant, so the
# embedding side decides), then every ARC method at T = 0.
rm -rf "$artifact-t0" "$artifact-t0".*-journal.sqlite
stamped "$out/calibrate-arc-t0.txt" "$specd" calibrate arc --target $t --draft $d --temperature 0 --sites candidates --out "$artifact-t0"
rm -f "$out/arc-t0-fixed-lossy.sqlite"
stamped "$out/arc-t0-fixed-lossy.txt" "$specd" bench --model $t --draft $d --methods "$methods" --artifact "$artifact-t0" --temperature 0 --draft-budget fixed --max-prompts "$prompts" \
  --repeats "$repeats" --json "$out/arc-t0-fixed-lossy.json" --traces "$out/arc-t0-fixed-lossy.sqlite"

echo "== specd bench --methods sd-tree,sd (T=0, --draft-budget fixed): the draft tree's cost ==" >&2
rm -f "$out/tree-cost.sqlite"
stamped "$out/tree-cost.txt" "$specd" bench --model $t --draft $d --methods sd-tree,sd --draft-budget fixed --temperature 0 --workloads data/calibration --max-prompts 10 \
  --repeats "$repeats" --traces "$out/tree-cost.sqlite"
for run in $("$specd" traces list --file "$out/tree-cost.sqlite" | awk '$1 ~ /^[0-9]+$/ { print $1 }'); do
  "$specd" traces export --file "$out/tree-cost.sqlite" --run "$run" --format jsonl
done | python3 -c '
import json, statistics, sys
ms = {}
for line in sys.stdin:
    step = json.loads(line)
    ms.setdefault(step["drafter"], []).append(step["draft_ms"])
for drafter, values in sorted(ms.items()):
    print(f"{drafter}: {len(values)} steps, draft per step mean {statistics.mean(values):.3f} ms, median {statistics.median(values):.3f} ms")
' | tee -a "$out/tree-cost.txt"

# The share of drafted nodes the pruner removed, per run with a pruner (steps.pruned / drafted).
python3 - "$out"/arc-t1-fixed.sqlite "$out"/arc-t0-fixed.sqlite <<'PY' | tee "$out/arc-pruned.txt"
import sqlite3, sys
for path in sys.argv[1:]:
    db = sqlite3.connect(path)
    for run, method in db.execute("SELECT id, method FROM runs"):
        pruned, verified = db.execute("SELECT sum(pruned), sum(draft_size) FROM steps WHERE run_id = ?", (run,)).fetchone()
        if pruned:
            print(f"{path}: {method}: {pruned} of {pruned + verified} drafted nodes pruned ({100 * pruned / (pruned + verified):.1f}%)")
PY
