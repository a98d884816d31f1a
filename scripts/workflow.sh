#!/usr/bin/env bash
# The calibrate -> verify -> deploy workflow of docs/workflow.md, on the demo pair (the large one;
# TARGET and DRAFT name another): builds the pair's artifact in $ARTIFACT (default
# artifacts/demo-pair), checks it, and deploys every calibrated policy with the thresholds it
# chose. Needs a built specd (scripts/build.sh). CALIBRATION_PROMPTS limits the calibration
# prompts (default: all 181); ARC_PROMPTS and AUDIT_PROMPTS those of calibrate arc (default: the
# same, and 4 audit prompts per workload category); BENCH_PROMPTS the prompts per workload
# category of the bench steps (default 20: the deploy audit's category rows need that many);
# SWEEP_PROMPTS and SWEEP_REPEATS those of the threshold sweeps (default 60 and 3). Last, the
# pair's coverage-audit report from the artifact and the three benches' traces and JSON goes to
# $REPORT (default reports/demo-pair: the committed one is this script's, run as is).
# Resumable: each finished step is listed in $ARTIFACT.workflow-steps with the CPU it ran on;
# RESUME=1 skips those and resumes the interrupted one (calibrations from their journals, benches
# from their traces, but csd's bench afresh: it learns online). Without it the run starts afresh.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/machine_stamp.sh
specd=${SPECD:-build/cli/specd}
target=${TARGET:-data/models/demo-large-target}
draft=${DRAFT:-data/models/demo-large-draft}
artifact=${ARTIFACT:-artifacts/demo-pair}
report=${REPORT:-reports/demo-pair}
limit=(--max-prompts "${CALIBRATION_PROMPTS:-0}")
bench_prompts=(--max-prompts "${BENCH_PROMPTS:-20}" --repeats 1)

steps="$artifact".workflow-steps
resume=()
if [ "${RESUME:-0}" = 1 ] && [ -f "$steps" ]; then
  resume=(--resume)
else
  # A fresh start: the artifact, the journals an interrupted earlier run left beside it, and the
  # traces and bench results of the deploy steps (kept beside it for the report).
  rm -rf "$artifact" "$artifact".*-journal.sqlite "$artifact".deploy-* "$steps"
  mkdir -p "$(dirname "$artifact")"
  : > "$steps"  # from now on RESUME=1 resumes this run
fi
cpu=$(cpu_model)
# step NAME [--allow-exit N] COMMAND...: runs COMMAND unless NAME finished before; exit N is
# reported, not a failure (a lossy family with no run inside its contract, a DRIFT line).
step() {
  local name=$1 allowed=0 status=0
  shift
  if [ "$1" = --allow-exit ]; then allowed=$2; shift 2; fi
  if grep -q "^$name " "$steps" 2>/dev/null; then
    echo "workflow.sh: $name finished before ($(grep "^$name " "$steps" | cut -d' ' -f2-)), skipped" >&2
    return 0
  fi
  "$@" || status=$?
  if [ "$status" -ne 0 ] && [ "$status" -ne "$allowed" ]; then return "$status"; fi
  echo "$name exit $status, $(date -u +%FT%TZ), $cpu" >> "$steps"
}
# A bench's --resume: only when its traces are there (bench refuses --resume without them).
bench_resume() { if [ ${#resume[@]} -gt 0 ] && [ -f "$1" ]; then echo --resume; fi; }

step csd "$specd" calibrate csd --target "$target" --draft "$draft" "${limit[@]}" --out "$artifact" "${resume[@]}"
step sam-corpus "$specd" calibrate sam-corpus --target "$target" --draft "$draft" "${limit[@]}" --out "$artifact" "${resume[@]}"
# ARC-Decode: the pilot's constants (per draft depth, and 'all'), then the arc policy on held-apart
# prompts chooses its gate (the artifact's arc.theta; 2, nothing relaxed, when no theta keeps the JS contract).
step arc "$specd" calibrate arc --target "$target" --draft "$draft" --max-prompts "${ARC_PROMPTS:-${CALIBRATION_PROMPTS:-0}}" \
  --audit-per-category "${AUDIT_PROMPTS:-4}" --temperature 1 --buckets depth --out "$artifact" "${resume[@]}"
# Threshold sweeps over the calibration prompts: each stores its runs and chosen point in the
# artifact; a lossy family's choice must pass its drift contract (exit 1 when no run does:
# reported, not a failure here, and the family then deploys its defaults).
sweep=(--target "$target" --draft "$draft" --max-prompts "${SWEEP_PROMPTS:-60}" --repeats "${SWEEP_REPEATS:-3}" --out "$artifact" "${resume[@]}")
# csd's grid reaches its lossless limit (lambda 1000000: no pair is seen that often, so nothing is
# rescued), so some run always meets the contract.
step sweep-csd --allow-exit 1 "$specd" calibrate sweep --policy csd --grid gamma=6 --grid lambda=6,24,96,1000000 --grid tau=0.01,0.1,0.5 "${sweep[@]}"
step sweep-pld "$specd" calibrate sweep --policy pld --grid tokens=5,10,20 --grid match=earliest,latest "${sweep[@]}"
step sweep-respec --allow-exit 1 "$specd" calibrate sweep --policy respec --grid theta_entropy=1.5,3,6 --grid tau=0,2 "${sweep[@]}"
step sweep-adapld "$specd" calibrate sweep --policy adapld --grid layer=1,3,6 --grid branches=2,8 "${sweep[@]}"
"$specd" artifact verify "$artifact" --target "$target" --draft "$draft"
"$specd" artifact inspect "$artifact"
# Deploy: every method below takes its thresholds from the artifact (the stats line names each
# value's source), at the sampling its calibration was made for.
"$specd" generate --model "$target" --draft "$draft" --method csd --artifact "$artifact" \
  --workload data/workloads/qa.jsonl --prompt-index 0 --max-new-tokens 64
traces="$artifact".deploy-csd.sqlite
# csd learns online, so its bench cannot resume (bench refuses): an interrupted one starts again.
if ! grep -q "^deploy-csd " "$steps"; then rm -f "$traces" "$artifact".deploy-csd.json; fi
step deploy-csd "$specd" bench --model "$target" --draft "$draft" --methods sd,csd,sam --artifact "$artifact" "${bench_prompts[@]}" \
  --traces "$traces" --json "$artifact".deploy-csd.json
# ARC-Decode at the temperature it was calibrated for: its audit recomputes the constants, the
# held-out coverage and the gate from the stored samples (exit 1 if they differ), then counts every
# token the bench's arc runs relaxed against the gate's contract (exit 1 for a DRIFT line:
# reported, not a failure here).
"$specd" audit arc --artifact "$artifact"
traces="$artifact".deploy-arc.sqlite
step deploy-arc "$specd" bench --model "$target" --draft "$draft" --methods sd-tree,arc,arc-prune-only,arc-lts-only --artifact "$artifact" \
  --temperature 1 "${bench_prompts[@]}" --traces "$traces" $(bench_resume "$traces") --json "$artifact".deploy-arc.json
"$specd" audit arc --artifact "$artifact" --traces "$traces" --model "$target" || [ $? -eq 1 ]
"$specd" generate --model "$target" --method adapld --artifact "$artifact" --workload data/workloads/code_editing.jsonl \
  --prompt-index 0 --max-new-tokens 64
traces="$artifact".deploy-policies.sqlite
step deploy-policies "$specd" bench --model "$target" --draft "$draft" --methods pld,sam,respec,adapld --artifact "$artifact" "${bench_prompts[@]}" \
  --traces "$traces" $(bench_resume "$traces") --json "$artifact".deploy-policies.json
# The audit report: provenance, ARC coverage, CSD memory, sweeps, deployment, drift, what-if.
"$specd" report --artifact "$artifact" --model "$target" \
  --traces "$artifact".deploy-csd.sqlite --traces "$artifact".deploy-arc.sqlite --traces "$artifact".deploy-policies.sqlite \
  --bench "$artifact".deploy-csd.json --bench "$artifact".deploy-arc.json --bench "$artifact".deploy-policies.json --out "$report"
