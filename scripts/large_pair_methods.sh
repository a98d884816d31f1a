#!/usr/bin/env bash
# Every lossless method against AR on the large demo pair, on every workload category, at T = 0
# and T = 1, with the cost-aware draft budget (docs/benchmarks.md, Methods against AR): sd, sd-tree,
# pld, and sam with the pair's static corpus (calibrate sam-corpus first). MAX_PROMPTS per category
# (default 10) and REPEATS per prompt (default 3). Run on a quiet machine; about 15 minutes on
# 2 cores. Raw output: reports/bench/large-methods-t{0,1}.{txt,json} and large-methods-paired.txt;
# per-step traces beside the artifact (artifacts/demo-large-pair.methods-t*.sqlite) for
# `specd traces` / `specd report`.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/machine_stamp.sh
specd=${SPECD:-build/cli/specd}
t=data/models/demo-large-target
d=data/models/demo-large-draft
artifact=${ARTIFACT:-artifacts/demo-large-pair}
out=reports/bench
mkdir -p "$out"
if [ ! -f "$artifact/manifest.json" ] || ! "$specd" artifact inspect "$artifact" | grep -q sam_corpus; then
  echo "== specd calibrate sam-corpus ==" >&2
  "$specd" calibrate sam-corpus --target $t --draft $d --out "$artifact"
fi
for temperature in 0 1; do
  name=large-methods-t$temperature
  echo "== specd bench --methods sd,sd-tree,pld,sam (T=$temperature) ==" >&2
  rm -f "$artifact.methods-t$temperature.sqlite"
  { machine_stamp
    "$specd" bench --model $t --draft $d --methods sd,sd-tree,pld,sam --artifact "$artifact" --temperature $temperature \
      --max-prompts "${MAX_PROMPTS:-10}" --repeats "${REPEATS:-3}" --json "$out/$name.json" \
      --traces "$artifact.methods-t$temperature.sqlite"; } | tee "$out/$name.txt"
done
# The tree against the chain, paired by prompt (the runs' own speedups over AR).
{ echo "# scripts/paired_ratio.py on the traces of scripts/large_pair_methods.sh (the runs of large-methods-t0/t1.txt), $(date -u +%F)"
  for temperature in 0 1; do scripts/paired_ratio.py "$artifact.methods-t$temperature.sqlite" sd-tree sd; done; } | tee "$out/large-methods-paired.txt"
