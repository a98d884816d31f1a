#!/usr/bin/env bash
# The calibrate -> verify -> deploy workflow of README.md (*Workflow*), on the demo pair: builds
# the pair's artifact in $ARTIFACT (default artifacts/demo-pair), checks it, and decodes with it.
# Needs a built specd (scripts/build.sh). CALIBRATION_PROMPTS limits the calibration prompts
# (default: all 181); BENCH_PROMPTS the prompts per workload category of the last step.
set -euo pipefail
cd "$(dirname "$0")/.."
specd=${SPECD:-build/cli/specd}
target=data/models/demo-target
draft=data/models/demo-draft
artifact=${ARTIFACT:-artifacts/demo-pair}
limit=(--max-prompts "${CALIBRATION_PROMPTS:-0}")

# A fresh start: the artifact and the journals an interrupted earlier run left beside it.
rm -rf "$artifact" "$artifact".*-journal.sqlite
"$specd" calibrate csd --target "$target" --draft "$draft" "${limit[@]}" --out "$artifact"
"$specd" calibrate sam-corpus --target "$target" --draft "$draft" "${limit[@]}" --out "$artifact"
"$specd" artifact verify "$artifact" --target "$target" --draft "$draft"
"$specd" artifact inspect "$artifact"
"$specd" generate --model "$target" --draft "$draft" --method csd --artifact "$artifact" --gamma 6 --draft-budget fixed \
  --workload data/workloads/qa.jsonl --prompt-index 0 --max-new-tokens 64
"$specd" bench --model "$target" --draft "$draft" --methods sd,csd,sam --artifact "$artifact" --gamma 6 --draft-budget fixed \
  --max-prompts "${BENCH_PROMPTS:-5}" --repeats 1
