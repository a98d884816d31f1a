#!/usr/bin/env bash
# Measures the speed figures quoted in docs/benchmarks.md and keeps the raw outputs in reports/bench/.
#   1. the runtime against the llama.cpp CPU anchor (docs/benchmarks.md): random
#      Llama checkpoints of the anchor's shapes a and c, in F32 and BF16, specd bench;
#   2. the demo pair: specd bench of the target and the draft;
#   3. every decoding method against AR on the workload suite, greedy: specd bench --methods.
#   4. KV cache precision: shape c and the demo target at long contexts with F32, BF16 and F16
#      caches (speed, KV memory, logits against the float32 cache).
#   scripts/bench_figures.sh [--runtime | --kv]   (--runtime: parts 1 and 2 only, a few minutes;
#                                                  --kv: part 4 only, a few minutes)
# Run on a quiet machine: other processes change the figures (each raw output records the CPU and its measured ceilings).
set -euo pipefail
part=all
case "${1:-}" in
  --runtime) part=runtime ;;
  --kv) part=kv ;;
esac
runtime_only=false
[ $part = runtime ] && runtime_only=true
cd "$(dirname "$0")/.."
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

$runtime_only && exit 0

# The demo pair's artifact: SAM-Decoding's static corpus (the target's greedy answers to the
# calibration prompts, which no workload shares) and CSD's correction memory.
# Every command names the pair: the commands' defaults are the large pair.
t=data/models/demo-target
d=data/models/demo-draft
artifact=artifacts/demo-pair
rm -rf "$artifact"
echo "== specd calibrate sam-corpus ==" >&2
"$specd" calibrate sam-corpus --target $t --draft $d --out "$artifact"
echo "== specd calibrate csd ==" >&2
"$specd" calibrate csd --target $t --draft $d --out "$artifact" | tee "$out/calibrate-csd.txt"

# Every method with the cost-aware draft budget (the default), then with the reference methods'
# fixed draft lengths; sam with and without the static corpus.
for budget in auto fixed; do
  for sam in dynamic corpus; do
    name=methods-t0-$budget$([ $sam = corpus ] && echo -sam-corpus || true)
    methods=sd,sd-tree,pld,sam
    corpus_option=()
    if [ $sam = corpus ]; then methods=pld,sam; corpus_option=(--artifact "$artifact"); fi
    echo "== specd bench --methods $methods (T=0, --draft-budget $budget, sam $sam) ==" >&2
    rm -f "$out/$name.sqlite"
    "$specd" bench --model $t --draft $d --methods "$methods" --draft-budget "$budget" "${corpus_option[@]}" --max-prompts "${MAX_PROMPTS:-40}" \
      --repeats "${METHOD_REPEATS:-3}" --json "$out/$name.json" --traces "$out/$name.sqlite" | tee "$out/$name.txt"
  done
done

# Summarization, the category where the gains are smallest, with more repeats per prompt (steadier
# timing, so the 95% intervals reflect the prompts rather than the machine).
for sam in dynamic corpus; do
  name=summarization-t0-r7$([ $sam = corpus ] && echo -sam-corpus || true)
  corpus_option=()
  [ $sam = corpus ] && corpus_option=(--artifact "$artifact")
  echo "== specd bench --methods pld,sam --categories summarization --repeats 7 (sam $sam) ==" >&2
  "$specd" bench --model $t --methods pld,sam --categories summarization "${corpus_option[@]}" --max-prompts 40 --repeats 7 \
    --json "$out/$name.json" | tee "$out/$name.txt"
done

# CSD's calibration cost against the number of prompts (linear: a prompt's decoding does not
# depend on the others).
for n in 45 90 181; do
  rm -rf "$artifact-scaling"
  echo "== specd calibrate csd --max-prompts $n ==" >&2
  echo "--max-prompts $n:"
  "$specd" calibrate csd --target $t --draft $d --max-prompts "$n" --out "$artifact-scaling" | sed -n 2,4p
done | tee "$out/calibrate-csd-scaling.txt"
rm -rf "$artifact-scaling"

# CSD against sd, with the papers' fixed draft length (gamma 6 as the paper) and with the budget,
# greedy and sampled; drift and quality are printed beside AR's.
for temperature in 0 0.6; do
  for budget in fixed auto; do
    name=csd-t$temperature-$budget
    echo "== specd bench --methods sd,csd,csd-ocm-only,csd-scg-only (T=$temperature, --draft-budget $budget) ==" >&2
    "$specd" bench --model $t --draft $d --methods sd,csd,csd-ocm-only,csd-scg-only --artifact "$artifact" --gamma 6 --draft-budget "$budget" \
      --temperature "$temperature" --max-prompts "${CSD_PROMPTS:-20}" --repeats "${METHOD_REPEATS:-3}" --json "$out/$name.json" | tee "$out/$name.txt"
  done
done
