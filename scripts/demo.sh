#!/usr/bin/env bash
# Sets up, builds and shows specd on the large demo pair (docs/models.md): the target continuing a
# prompt from the workload suite, specd bench on the target and on the draft, the pair's artifact
# (SAM's corpus, CSD's memory, CSD's thresholds chosen under a drift contract, not the paper's),
# and every method against AR with it.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
specd=build/cli/specd
target=data/models/demo-large-target
draft=data/models/demo-large-draft

echo
echo "== specd generate (large demo target, greedy, a code-editing prompt from data/workloads) =="
"$specd" generate --model "$target" --workload data/workloads/code_editing.jsonl --prompt-index 0 --max-new-tokens 96
echo
echo "== specd generate --method pld (the same prompt gives the same text; the stats line shows its steps and acceptance) =="
"$specd" generate --model "$target" --workload data/workloads/code_editing.jsonl --prompt-index 0 --max-new-tokens 96 \
  --method pld 2>&1 >/dev/null | tail -n 1
echo
echo "== specd generate (sampling: T=0.8, top-p 0.95, seed 1, a QA prompt) =="
"$specd" generate --model "$target" --workload data/workloads/qa.jsonl --prompt-index 0 --max-new-tokens 64 \
  --temperature 0.8 --top-p 0.95 --seed 1
echo
echo "== specd bench (the target) =="
"$specd" bench --model "$target" --repeats 5
echo
echo "== specd bench (the draft) =="
"$specd" bench --model "$draft" --repeats 5
echo
artifact=artifacts/demo-large-pair
rm -rf "$artifact"
echo "== specd calibrate sam-corpus (SAM-Decoding's static corpus: the target's answers to the calibration prompts) =="
"$specd" calibrate sam-corpus --target "$target" --draft "$draft" --out "$artifact"
echo
echo "== specd calibrate csd (CSD's correction memory: rejections of standard speculative decoding, 60 prompts) =="
"$specd" calibrate csd --target "$target" --draft "$draft" --max-prompts 60 --out "$artifact"
echo
echo "== specd calibrate sweep --policy csd (CSD's thresholds under the drift contract on 20 calibration prompts: the paper's lambda 6 against 24 and 96; exit 1, reported, when none keeps the text) =="
"$specd" calibrate sweep --policy csd --target "$target" --draft "$draft" --grid lambda=24,96 --max-prompts 20 --repeats 1 \
  --out "$artifact" || [ $? -eq 1 ]
echo
echo "== specd artifact verify =="
"$specd" artifact verify "$artifact" --target "$target" --draft "$draft"
echo
echo "== specd bench --methods (every method against AR, 2 prompts per workload category; sam with the corpus, csd LOSSY at the thresholds its sweep chose) =="
"$specd" bench --model "$target" --draft "$draft" --methods sd,sd-tree,pld,sam,csd --max-prompts 2 --repeats 1 \
  --artifact "$artifact"
