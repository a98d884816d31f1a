#!/usr/bin/env bash
# Measures the speed figures quoted in README.md and keeps the raw outputs in reports/bench/.
#   1. the runtime against the llama.cpp CPU anchor (../shared/research/cpu-anchor.md): random
#      Llama checkpoints of the anchor's shapes a and c, in F32 and BF16, specd bench;
#   2. the demo pair: specd bench of the target and the draft;
#   3. every decoding method against AR on the workload suite, greedy: specd bench --methods.
# Run on a quiet machine: other processes change the figures (the README gives the date).
set -euo pipefail
cd "$(dirname "$0")/.."
specd=build/cli/specd
out=reports/bench
scratch=${SCRATCH:-build/bench-models}
repeats=${REPEATS:-10}
mkdir -p "$out" "$scratch"

for shape in a c; do
  for dtype in f32 bf16; do
    dir=$scratch/shape-$shape-$dtype
    [ -f "$dir/config.json" ] || "$specd" init-model --out "$dir" --shape "$shape" --dtype "$dtype"
    echo "== specd bench --model shape $shape $dtype ==" >&2
    "$specd" bench --model "$dir" --repeats "$repeats" --forward-sizes 1 2 4 8 16 32 --json > "$out/anchor-$shape-$dtype.json"
  done
done

for model in demo-target demo-draft; do
  echo "== specd bench --model data/models/$model ==" >&2
  "$specd" bench --model "data/models/$model" --repeats "$repeats" --json > "$out/$model.json"
done

echo "== specd bench --model data/models/demo-target --fp32-activations ==" >&2
"$specd" bench --model data/models/demo-target --fp32-activations --repeats "$repeats" --json > "$out/demo-target-fp32-activations.json"

# Every method with the cost-aware draft budget (the default), then with the reference methods'
# fixed draft lengths.
for budget in auto fixed; do
  echo "== specd bench --methods (T=0, --draft-budget $budget) ==" >&2
  rm -f "$out/methods-t0-$budget.sqlite"
  "$specd" bench --methods sd,sd-tree,pld,sam --draft-budget "$budget" --max-prompts "${MAX_PROMPTS:-5}" \
    --repeats "${METHOD_REPEATS:-3}" --json "$out/methods-t0-$budget.json" --traces "$out/methods-t0-$budget.sqlite" \
    | tee "$out/methods-t0-$budget.txt"
done
