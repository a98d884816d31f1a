#!/usr/bin/env bash
# Measures the ReSpec / AdaPLD / sweep figures quoted in docs/benchmarks.md and keeps the raw outputs in
# reports/bench/:
#   1. the large demo pair's artifact with SAM's static corpus, then one threshold sweep per policy over the
#      calibration prompts (pld, sam, respec, adapld), each choosing the point the artifact deploys;
#   2. every retrieval policy and its ablations against AR on the workloads with that artifact
#      (greedy, cost-aware budget), then the same with the papers' fixed draft sizes (MAT without
#      the budget's say).
# Run on a quiet machine (docs/benchmarks.md, *The machine*). Needs a built specd (scripts/build.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
specd=build/cli/specd
out=reports/bench
artifact=${ARTIFACT:-artifacts/demo-large-sweep}
sweep_prompts=${SWEEP_PROMPTS:-30}
prompts=${MAX_PROMPTS:-10}
repeats=${METHOD_REPEATS:-3}
t=data/models/demo-large-target
d=data/models/demo-large-draft
mkdir -p "$out"
source scripts/lib/machine_stamp.sh

rm -rf "$artifact" "$artifact".*-journal.sqlite
"$specd" calibrate sam-corpus --target $t --draft $d --out "$artifact" > "$out/sweep-sam-corpus.txt"
sweep() {
  local policy=$1; shift
  echo "== specd calibrate sweep --policy $policy $* ==" >&2
  { machine_stamp
    "$specd" calibrate sweep --policy "$policy" --target $t --draft $d --max-prompts "$sweep_prompts" --repeats "$repeats" \
      --out "$artifact" "$@"; } | tee "$out/sweep-$policy.txt" || [ $? -eq 1 ]  # exit 1: no run qualified (reported)
}
sweep pld --grid tokens=5,10,20 --grid match=earliest,latest
sweep sam --grid len_bias=2,5 --grid threshold=3,5
sweep respec --grid theta_entropy=3,6 --grid tau=0,2 --grid key_rule=entropy,existing
sweep adapld --grid layer=1,3,6 --grid branches=2,8
"$specd" artifact inspect "$artifact" > "$out/sweep-artifact.txt"

methods=pld,sam,respec,respec-no-trigger,respec-no-ema,respec-lossless,adapld,adapld-lexical-only,adapld-no-branches,adapld-no-successors
for budget in auto fixed; do
  echo "== specd bench --methods $methods --artifact $artifact --draft-budget $budget ==" >&2
  { machine_stamp
    "$specd" bench --model $t --draft $d --methods "$methods" --artifact "$artifact" --draft-budget "$budget" --max-prompts "$prompts" \
      --repeats "$repeats" --json "$out/policies-t0-$budget.json"; } | tee "$out/policies-t0-$budget.txt"
done
