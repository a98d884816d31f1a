#!/usr/bin/env bash
# Checks that the data recipe is deterministic: two independent runs (fresh downloads, fresh
# unpacking) give byte-identical splits, the committed split hashes, the committed tokenizer and
# the committed workloads.
#
#   scripts/corpus/check_deterministic.sh [SCRATCH_DIR]
#
# Needs the network (apt mirrors) and about 400 MB in SCRATCH_DIR (default: a temporary folder,
# removed afterwards). Exits non-zero on the first difference.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
scratch="${1:-$(mktemp -d)}"
[[ -n "${1:-}" ]] || trap 'rm -rf "$scratch"' EXIT
[[ -d "$here/node_modules/tokenizers" ]] || (cd "$here" && npm ci --no-audit --no-fund)
fail() { echo "check_deterministic: FAIL: $*" >&2; exit 1; }

for run in a b; do
  echo "check_deterministic: run $run" >&2
  SPECD_CORPUS_STRICT=1 "$here/fetch_corpus.sh" "$scratch/$run" 2>"$scratch/$run.log" ||
    { cat "$scratch/$run.log" >&2; fail "run $run differs from data/corpus/MANIFEST.json"; }
  node "$here/train_tokenizer.js" "$scratch/$run/train.txt" "$scratch/$run/tokenizer.json" >/dev/null 2>&1
  mkdir -p "$scratch/$run-repo/data/tokenizer"
  cp "$scratch/$run/tokenizer.json" "$scratch/$run-repo/data/tokenizer/"
  node "$here/build_workloads.js" "$scratch/$run" "$scratch/$run-repo" 2>/dev/null
done

for f in train.txt calibration.txt eval.txt train.docs.tsv calibration.docs.tsv eval.docs.tsv \
  splits.json MANIFEST.json tokenizer.json; do
  cmp -s "$scratch/a/$f" "$scratch/b/$f" || fail "$f differs between the two runs"
done
cmp -s "$scratch/a/tokenizer.json" "$repo/data/tokenizer/tokenizer.json" ||
  fail "the retrained tokenizer differs from data/tokenizer/tokenizer.json"
for d in workloads calibration; do
  diff -r -q "$scratch/a-repo/data/$d" "$scratch/b-repo/data/$d" >&2 || fail "data/$d differs between runs"
  diff -r -q "$scratch/a-repo/data/$d" "$repo/data/$d" --exclude=README.md >&2 ||
    fail "data/$d differs from the committed files"
done
node -e '
const s = require(process.argv[1]).splits;
for (const [k, v] of Object.entries(s)) console.log(`${k}: ${v.documents} documents, ${v.bytes} bytes, sha256 ${v.sha256}`);
' "$scratch/a/splits.json"
echo "check_deterministic: OK (two runs identical, equal to the committed manifest, tokenizer and workloads)"
