#!/usr/bin/env bash
# Why the large demo target has its shape: random-weight checkpoints of the candidate shapes
# (vocabulary 4096, tied embeddings, context 512) and the cost of verifying n tokens against one
# on this machine (specd bench --forward-sizes 1 4 8, 2 threads), plus the draft's (the small
# demo target's) decode cost. The target must be bound by weight reads: t(4)/t(1) <= 1.15 and
# t(8)/t(1) <= 1.6, and a draft step at most 0.1 of a target step.
# Run on a quiet machine (docs/benchmarks.md, *The machine*). Raw output:
# reports/bench/large-target-shapes.txt. Needs a built specd (scripts/build.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/machine_stamp.sh
specd=${SPECD:-build/cli/specd}
scratch=${SCRATCH:-build/shape-models}
out=${OUT:-reports/bench/large-target-shapes.txt}
mkdir -p "$scratch" "$(dirname "$out")"

# name layers hidden heads kv-heads ffn dtype
shapes=(
  "12x512-bf16 12 512 16 8 1408 bf16"
  "12x512-f32 12 512 16 8 1408 f32"
  "8x512-f32 8 512 16 8 1408 f32"
  "16x640-bf16 16 640 20 10 1728 bf16"
)
{
  machine_stamp
  for s in "${shapes[@]}"; do
    read -r name layers hidden heads kv ffn dtype <<< "$s"
    "$specd" init-model --out "$scratch/$name" --layers "$layers" --hidden "$hidden" --heads "$heads" --kv-heads "$kv" \
      --ffn "$ffn" --vocab 4096 --tie --dtype "$dtype" --context 512 --force > /dev/null
    echo "== $name: $layers layers, hidden $hidden, $heads heads / $kv kv, ffn $ffn, $dtype"
    "$specd" bench --model "$scratch/$name" --forward-sizes 1 4 8 --threads 2 2>&1
  done
  echo "== draft: data/models/demo-target"
  "$specd" bench --model data/models/demo-target --forward-sizes 1 --threads 2 2>&1
} > "$out"
echo "large_pair_shapes: wrote $out" >&2
