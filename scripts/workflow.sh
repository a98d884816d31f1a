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
set -euo pipefail
cd "$(dirname "$0")/.."
specd=${SPECD:-build/cli/specd}
target=${TARGET:-data/models/demo-large-target}
draft=${DRAFT:-data/models/demo-large-draft}
artifact=${ARTIFACT:-artifacts/demo-pair}
report=${REPORT:-reports/demo-pair}
limit=(--max-prompts "${CALIBRATION_PROMPTS:-0}")
bench_prompts=(--max-prompts "${BENCH_PROMPTS:-20}" --repeats 1)

# A fresh start: the artifact, the journals an interrupted earlier run left beside it, and the
# traces and bench results of the deploy steps (kept beside it for the report).
rm -rf "$artifact" "$artifact".*-journal.sqlite "$artifact".deploy-*
"$specd" calibrate csd --target "$target" --draft "$draft" "${limit[@]}" --out "$artifact"
"$specd" calibrate sam-corpus --target "$target" --draft "$draft" "${limit[@]}" --out "$artifact"
# ARC-Decode: the pilot's constants, then the arc policy on held-apart prompts chooses its gate
# (the artifact's arc.theta; 2, nothing relaxed, when no theta keeps the JS contract).
"$specd" calibrate arc --target "$target" --draft "$draft" --max-prompts "${ARC_PROMPTS:-${CALIBRATION_PROMPTS:-0}}" \
  --audit-per-category "${AUDIT_PROMPTS:-4}" --temperature 1 --out "$artifact"
# Threshold sweeps over the calibration prompts: each stores its runs and chosen point in the
# artifact; a lossy family's choice must pass its drift contract (exit 1 when no run does:
# reported, not a failure here, and the family then deploys its defaults).
sweep=(--target "$target" --draft "$draft" --max-prompts "${SWEEP_PROMPTS:-60}" --repeats "${SWEEP_REPEATS:-3}" --out "$artifact")
# csd's grid reaches its lossless limit (lambda 1000000: no pair is seen that often, so nothing is
# rescued), so some run always meets the contract.
"$specd" calibrate sweep --policy csd --grid gamma=6 --grid lambda=6,24,96,1000000 --grid tau=0.01,0.1,0.5 "${sweep[@]}" || [ $? -eq 1 ]
"$specd" calibrate sweep --policy pld --grid tokens=5,10,20 --grid match=earliest,latest "${sweep[@]}"
"$specd" calibrate sweep --policy respec --grid theta_entropy=1.5,3,6 --grid tau=0,2 "${sweep[@]}" || [ $? -eq 1 ]
"$specd" calibrate sweep --policy adapld --grid layer=1,3,6 --grid branches=2,8 "${sweep[@]}"
"$specd" artifact verify "$artifact" --target "$target" --draft "$draft"
"$specd" artifact inspect "$artifact"
# Deploy: every method below takes its thresholds from the artifact (the stats line names each
# value's source), at the sampling its calibration was made for.
"$specd" generate --model "$target" --draft "$draft" --method csd --artifact "$artifact" \
  --workload data/workloads/qa.jsonl --prompt-index 0 --max-new-tokens 64
"$specd" bench --model "$target" --draft "$draft" --methods sd,csd,sam --artifact "$artifact" "${bench_prompts[@]}" \
  --traces "$artifact".deploy-csd.sqlite --json "$artifact".deploy-csd.json
# ARC-Decode at the temperature it was calibrated for: its audit recomputes the constants, the
# held-out coverage and the gate from the stored samples (exit 1 if they differ), then counts every
# token the bench's arc runs relaxed against the gate's contract (exit 1 for a DRIFT line:
# reported, not a failure here).
"$specd" audit arc --artifact "$artifact"
traces="$artifact".deploy-arc.sqlite
"$specd" bench --model "$target" --draft "$draft" --methods sd-tree,arc,arc-prune-only,arc-lts-only --artifact "$artifact" \
  --temperature 1 "${bench_prompts[@]}" --traces "$traces" --json "$artifact".deploy-arc.json
"$specd" audit arc --artifact "$artifact" --traces "$traces" --model "$target" || [ $? -eq 1 ]
"$specd" generate --model "$target" --method adapld --artifact "$artifact" --workload data/workloads/code_editing.jsonl \
  --prompt-index 0 --max-new-tokens 64
"$specd" bench --model "$target" --draft "$draft" --methods pld,sam,respec,adapld --artifact "$artifact" "${bench_prompts[@]}" \
  --traces "$artifact".deploy-policies.sqlite --json "$artifact".deploy-policies.json
# The audit report: provenance, ARC coverage, CSD memory, sweeps, deployment, drift, what-if.
"$specd" report --artifact "$artifact" --model "$target" \
  --traces "$artifact".deploy-csd.sqlite --traces "$traces" --traces "$artifact".deploy-policies.sqlite \
  --bench "$artifact".deploy-csd.json --bench "$artifact".deploy-arc.json --bench "$artifact".deploy-policies.json --out "$report"
