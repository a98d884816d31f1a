#!/usr/bin/env bash
# Rebuilds everything data-side of the demo: corpus splits, tokenizer check, workloads.
#
#   scripts/corpus/build_all.sh [--record]
#
# 1. fetch_corpus.sh: debs and source package -> data/corpus/build/{train,calibration,eval}.txt
# 2. train_tokenizer.js on the train split; the result must equal data/tokenizer/tokenizer.json
#    (--record replaces the committed tokenizer and manifest instead of warning)
# 3. build_workloads.js -> data/workloads/*.jsonl and data/calibration/prompts.jsonl
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
build="$repo/data/corpus/build"
record=()
if [[ "${1:-}" == "--record" ]]; then record=(--record); fi

"$here/fetch_corpus.sh" "${record[@]}" "$build"
[[ -d "$here/node_modules/tokenizers" ]] || (cd "$here" && npm ci --no-audit --no-fund)
node "$here/train_tokenizer.js" "$build/train.txt" "$build/tokenizer.json"
if ! cmp -s "$build/tokenizer.json" "$repo/data/tokenizer/tokenizer.json"; then
  if [[ ${#record[@]} -gt 0 ]]; then
    cp "$build/tokenizer.json" "$repo/data/tokenizer/tokenizer.json"
    echo "build_all: recorded a new data/tokenizer/tokenizer.json (retrain the models)" >&2
  else
    echo "build_all: WARNING: the retrained tokenizer differs from data/tokenizer/tokenizer.json" >&2
  fi
fi
node "$here/build_workloads.js" "$build" "$repo"
