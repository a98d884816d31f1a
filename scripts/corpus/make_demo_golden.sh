#!/usr/bin/env bash
# Regenerates tests/fixtures/golden/demo_eval.jsonl: the demo tokenizer's ids and decodes, by
# Hugging Face's library (tests/reference/encode.js), on eval-split text.
#
#   scripts/corpus/make_demo_golden.sh [BUILD_DIR]
#
# Text: the first 3,000 lines of eval.txt, plus up to 600 later eval lines with unusual content
# (tabs, trailing or whitespace-only runs, carriage returns, non-ASCII). encode.js records each
# line and each block of 8 lines, with add_special_tokens on; the unusual lines are recorded a
# second time with add_special_tokens off.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
build="${1:-$repo/data/corpus/build}"
encode="$repo/tests/reference/encode.js"
[[ -d "$repo/tests/reference/node_modules/tokenizers" ]] ||
  { echo "make_demo_golden: run npm ci in tests/reference first" >&2; exit 1; }

work="$build/golden"
mkdir -p "$work"
head -n 3000 "$build/eval.txt" >"$work/common.txt"
tail -n +3001 "$build/eval.txt" |
  LC_ALL=C grep -P '\t|[ \t]$|^\s+$|\r|[^\x00-\x7f]' | head -n 600 >"$work/unusual.txt"

node "$encode" "$repo/data/tokenizer/tokenizer.json" "$work/common.txt" "$work/common.jsonl"
node "$encode" "$repo/data/tokenizer/tokenizer.json" "$work/unusual.txt" "$work/unusual.jsonl"
node "$encode" "$repo/data/tokenizer/tokenizer.json" "$work/unusual.txt" "$work/unusual-nospecial.jsonl" \
  --no-special
# The unusual records number their lines within that filtered set, not within eval.txt.
cat "$work/common.jsonl" "$work/unusual.jsonl" "$work/unusual-nospecial.jsonl" \
  >"$repo/tests/fixtures/golden/demo_eval.jsonl"
wc -lc "$repo/tests/fixtures/golden/demo_eval.jsonl" >&2
