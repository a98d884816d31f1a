#!/usr/bin/env bash
# Measures the speed figures quoted in docs/benchmarks.md and keeps the raw outputs in reports/bench/.
#   1. the runtime against the llama.cpp CPU anchor (docs/benchmarks.md): random
#      Llama checkpoints of the anchor's shapes a and c, in F32 and BF16, specd bench;
#   2. both demo pairs: specd bench of each target and draft;
#   3. every lossless method against AR on the workload suite, on the large pair: T = 0 and T = 1
#      with the cost-aware budget (scripts/large_pair_methods.sh), then T = 0 with the reference
#      methods' fixed draft lengths;
#   4. CSD on the large pair: its calibration (and its cost against the number of prompts), then
#      csd and its ablations against sd, greedy and sampled, fixed and auto budget;
#   5. KV cache precision: shape c and the demo target at long contexts with F32, BF16 and F16
#      caches (speed, KV memory, logits against the float32 cache).
#   scripts/bench_figures.sh [--runtime | --methods | --csd | --kv]   (one part: 1-2, 3, 4 or 5;
#                                                                  none: 1 to 4)
# Run on a quiet machine: other processes change the figures (each raw output records the CPU and its measured ceilings).
set -euo pipefail
part=all
case "${1:-}" in
  "") ;;
  --runtime) part=runtime ;;
  --methods) part=methods ;;
  --csd) part=csd ;;
  --kv) part=kv ;;
  *) echo "bench_figures.sh: unknown option $1 (--runtime, --methods, --csd or --kv)" >&2; exit 2 ;;
esac
runs() { [ $part = all ] || [ $part = "$1" ]; }
cd "$(dirname "$0")/.."
source scripts/lib/machine_stamp.sh
specd=build/cli/specd
out=reports/bench
scratch=${SCRATCH:-build/bench-models}
repeats=${REPEATS:-10}
mkdir -p "$out" "$scratch"

kv_figures() {
  local dir=$scratch/shape-c-f32
  [ -f "$dir/config.json" ] || "$specd" init-model --out "$dir" --shape c --dtype f32
  # Cache types take turns within each round, so that a busy spell of the machine hits them alike.
  for round in 1 2; do
    for kv in f32 bf16 f16; do
      echo "== specd bench --model shape c f32 --kv-dtype $kv (round $round) ==" >&2
      "$specd" bench --model "$dir" --kv-dtype "$kv" --repeats 5 --prompt-lengths 512 1536 --new-tokens 32 --prefix 1024 \
        --forward-sizes 1 8 32 --json > "$out/kv-shape-c-$kv-$round.json"
      "$specd" bench --model data/models/demo-target --kv-dtype "$kv" --repeats 5 --prompt-lengths 128 384 --new-tokens 64 \
        --prefix 384 --forward-sizes 1 8 32 --json > "$out/kv-demo-target-$kv-$round.json"
    done
  done
}
if [ $part = kv ]; then
  kv_figures
  exit 0
fi

if runs runtime; then
  for shape in a c; do
    for dtype in f32 bf16; do
      dir=$scratch/shape-$shape-$dtype
      [ -f "$dir/config.json" ] || "$specd" init-model --out "$dir" --shape "$shape" --dtype "$dtype"
      echo "== specd bench --model shape $shape $dtype ==" >&2
      "$specd" bench --model "$dir" --repeats "$repeats" --forward-sizes 1 2 4 8 16 32 --json > "$out/anchor-$shape-$dtype.json"
    done
  done

  for model in demo-large-target demo-large-draft demo-target demo-draft; do
    echo "== specd bench --model data/models/$model ==" >&2
    "$specd" bench --model "data/models/$model" --repeats "$repeats" --json > "$out/$model.json"
  done

  echo "== specd bench --model data/models/demo-target --fp32-activations ==" >&2
  "$specd" bench --model data/models/demo-target --fp32-activations --repeats "$repeats" --json > "$out/demo-target-fp32-activations.json"
fi

# The large pair's artifact: SAM-Decoding's static corpus (the target's greedy answers to the
# calibration prompts, which no workload shares) and CSD's correction memory. Every command names
# the pair.
t=data/models/demo-large-target
d=data/models/demo-large-draft
artifact=${ARTIFACT:-artifacts/demo-large-pair}
prompts=${MAX_PROMPTS:-10}
method_repeats=${METHOD_REPEATS:-3}

if runs methods; then
  ARTIFACT=$artifact scripts/large_pair_methods.sh
  # The reference methods' fixed draft lengths (sd's gamma, the trees' 16 nodes, PLD's 10 tokens,
  # SAM's 39): what the budget saves.
  name=methods-t0-fixed
  echo "== specd bench --methods sd,sd-tree,pld,sam (T=0, --draft-budget fixed) ==" >&2
  rm -f "$out/$name.sqlite"
  { machine_stamp
    "$specd" bench --model $t --draft $d --methods sd,sd-tree,pld,sam --draft-budget fixed --artifact "$artifact" --max-prompts "$prompts" \
      --repeats "$method_repeats" --json "$out/$name.json" --traces "$out/$name.sqlite"; } | tee "$out/$name.txt"
fi

if runs csd; then
  rm -rf "$artifact"
  echo "== specd calibrate sam-corpus ==" >&2
  "$specd" calibrate sam-corpus --target $t --draft $d --out "$artifact"
  echo "== specd calibrate csd ==" >&2
  { machine_stamp; "$specd" calibrate csd --target $t --draft $d --out "$artifact"; } | tee "$out/calibrate-csd.txt"

  # CSD's calibration cost against the number of prompts (linear: a prompt's decoding does not
  # depend on the others).
  { machine_stamp
    for n in 45 90 181; do
      rm -rf "$artifact-scaling"
      echo "== specd calibrate csd --max-prompts $n ==" >&2
      echo "--max-prompts $n:"
      "$specd" calibrate csd --target $t --draft $d --max-prompts "$n" --out "$artifact-scaling" | sed -n 2,4p
    done; } | tee "$out/calibrate-csd-scaling.txt"
  rm -rf "$artifact-scaling"

  # CSD against sd, with the paper's fixed draft length (gamma 6) and with the budget, greedy and
  # sampled; drift and quality are printed beside AR's.
  for temperature in 0 0.6; do
    for budget in fixed auto; do
      name=csd-t$temperature-$budget
      echo "== specd bench --methods sd,csd,csd-ocm-only,csd-scg-only (T=$temperature, --draft-budget $budget) ==" >&2
      { machine_stamp
        "$specd" bench --model $t --draft $d --methods sd,csd,csd-ocm-only,csd-scg-only --artifact "$artifact" --gamma 6 --draft-budget "$budget" \
          --temperature "$temperature" --max-prompts "${CSD_PROMPTS:-10}" --repeats "$method_repeats" --json "$out/$name.json"; } | tee "$out/$name.txt"
    done
  done
fi
