#!/usr/bin/env bash
# Trains the large demo pair, the one whose target is bound by weight reads on a CPU (issue 25):
#   1. the target (Llama, 12 layers, hidden 512, 37.5M parameters stored in BF16: 75 MB of weights,
#      so that a decode step reads them from memory and verifying a few more tokens costs little;
#      the model card says why BF16 and this size), grown from data/models/demo-target by Net2Net
#      (specd-train --grow-from: the same function at step 0) and trained on;
#   2. the draft: data/models/demo-target (same tokenizer and family; the target starts as its
#      function) distilled from the new target for DRAFT_STEPS (400) steps into
#      data/models/demo-large-draft; DRAFT_STEPS=0 uses demo-target as trained (no copy);
#   3. specd-train eval of the pair; 4. greedy samples; 5. model cards; 6. the weights as Hugging
#      Face sharded safetensors (shards under 50 MB) in data/models/demo-large-target.
# Resumable: run it again after an interruption (a kill loses at most --checkpoint-every steps).
# The state lives outside the work tree ($STATE, default ~/.cache/specd/train-large-pair); remove
# it to start over. Each stage is sized to finish within one working session on 2 cores (the
# target about two hours, the draft 45 minutes), since a machine's cache may not outlive the
# session; a fresh machine starts from the committed target. Wall time is recorded in training.json
# (train_seconds) and in the model cards. Training must not run in CI: CI uses the committed pair.
#
# Needs: scripts/build.sh (specd, specd-train), data/corpus/build/{train,eval}.txt
# (scripts/corpus/fetch_corpus.sh) and data/tokenizer/tokenizer.json.
# Knobs (environment): BUILD, STATE, MODELS, THREADS, TARGET_STEPS, DRAFT_STEPS, EVAL_TOKENS,
# STOP_AFTER (stop the current stage after that many of its steps, to share the machine),
# RETRAIN_TARGET.
set -euo pipefail
cd "$(dirname "$0")/.."

build=${BUILD:-build}
state=${STATE:-$HOME/.cache/specd/train-large-pair}
models=${MODELS:-data/models}
threads=${THREADS:-2}
target_steps=${TARGET_STEPS:-700}
draft_steps=${DRAFT_STEPS:-400}
eval_tokens=${EVAL_TOKENS:-65536}
stop_after=()
[ -n "${STOP_AFTER:-}" ] && stop_after=(--stop-after "$STOP_AFTER")

train_bin=$build/training/specd-train
specd_bin=$build/cli/specd
corpus=data/corpus/build
tokenizer=data/tokenizer/tokenizer.json
small=$models/demo-target
target=$models/demo-large-target
draft=$models/demo-large-draft
for f in "$train_bin" "$specd_bin" "$corpus/train.txt" "$corpus/eval.txt" "$tokenizer" "$small/config.json"; do
  [ -e "$f" ] || { echo "train_large_pair: missing $f (see the comment at the top)" >&2; exit 2; }
done
mkdir -p "$state"
# Unsharded exports go to the state; the committed directories get the sharded form at the end.
target_out=$state/target-model
draft_out=$state/draft-model

common=(--text "$corpus/train.txt" --eval-text "$corpus/eval.txt" --tokenizer "$tokenizer"
        --cache-dir "$state/tokens" --context 512 --batch 8 --seq 512 --weight-decay 0.1 --clip 1.0
        --eval-tokens 32768 --checkpoint-every 10 --log-every 5 --eval-every 100 --seed 2 --threads "$threads" --resume)

stage_done() { [ -f "$1/training.json" ] && [ -f "$1/model.safetensors.index.json" ]; }

# A machine without the state (a fresh one) starts from the committed, trained target, so that
# the draft can be distilled in a later session; RETRAIN_TARGET=1 trains the target again.
if ! stage_done "$target_out" && stage_done "$target" && [ "${RETRAIN_TARGET:-0}" != 1 ]; then
  echo "== target: the committed $target (RETRAIN_TARGET=1 trains it again) ==" >&2
  target_out=$target
fi

if ! stage_done "$target_out"; then
  echo "== target: $target_steps steps, grown from $small ==" >&2
  "$train_bin" train --config-out "$target_out" --state-dir "$state/target" "${common[@]}" "${stop_after[@]}" \
    --layers 12 --hidden 512 --heads 16 --kv-heads 8 --ffn 1408 --dtype bf16 --max-shard-mb 45 --grow-from "$small" \
    --steps "$target_steps" --lr 5e-4 --warmup 40 --min-lr 5e-5 || exit $?
fi

if [ "$draft_steps" -eq 0 ]; then
  draft_out=$small
  draft=$small
elif ! stage_done "$draft_out"; then
  echo "== draft: $draft_steps steps, $small distilled from the target ==" >&2
  "$train_bin" train --config-out "$draft_out" --state-dir "$state/draft" "${common[@]}" "${stop_after[@]}" \
    --layers 6 --hidden 256 --heads 8 --kv-heads 4 --ffn 704 --dtype bf16 --max-shard-mb 45 --grow-from "$small" \
    --distill-from "$target_out" --distill-weight 0.8 \
    --steps "$draft_steps" --lr 5e-4 --warmup 10 --min-lr 5e-5 || exit $?
fi

echo "== eval ==" >&2
"$train_bin" eval --target "$target_out" --draft "$draft_out" --text "$corpus/eval.txt" --cache-dir "$state/tokens" \
  --tokens "$eval_tokens" --threads "$threads" --json > "$state/pair_eval.json"
echo "== samples ==" >&2
source scripts/lib/pair_samples.sh
write_samples "$specd_bin" "$target_out" "$threads" "$state/samples.txt"

echo "== the pair into $target and $draft ==" >&2
# The sharded weights with their index, config, tokenizer and training record, swapped in whole;
# the draft's teacher is named by its committed directory rather than the state's.
install_model() {
  local src=$1 dest=$2
  rm -rf "$dest.tmp" && mkdir -p "$dest.tmp"
  cp "$src"/*.safetensors "$src"/model.safetensors.index.json "$src"/config.json "$src"/tokenizer.json "$dest.tmp"/
  node -e '
    const fs = require("fs");
    const [file, from, to] = process.argv.slice(1);
    const run = JSON.parse(fs.readFileSync(file, "utf8"));
    if (run.recipe.distill_from === from) run.recipe.distill_from = to;
    process.stdout.write(JSON.stringify(run, null, 2) + "\n");' "$src/training.json" "$target_out" "$target" > "$dest.tmp/training.json"
  rm -rf "$dest" && mv "$dest.tmp" "$dest"
}
[ "$target_out" = "$target" ] || install_model "$target_out" "$target"
[ "$draft_steps" -eq 0 ] || install_model "$draft_out" "$draft"

echo "== model cards ==" >&2
# With the small target as the draft, its own card stays as it is; the pair's figures go into the
# large target's card.
draft_card=()
if [ "$draft_steps" -gt 0 ]; then
  draft_card=(--draft-intro "The draft of the large demo pair: demo-target (same tokenizer and family) distilled from demo-large-target.")
fi
draft_name=demo-large-draft
[ "$draft_steps" -eq 0 ] && draft_name=demo-target
node scripts/lib/model_card.js --target "$target" --draft "$draft" --target-name demo-large-target --draft-name "$draft_name" \
  --state "$state" --threads "$threads" --script scripts/train_large_pair.sh "${draft_card[@]}" \
  --target-intro "The large demo target of specd: a Llama whose weights do not fit in a CPU cache, so that decoding one token reads them from memory and verifying a few drafted tokens costs little more (the regime speculative decoding is built for). Its draft is $draft_name." \
  --target-notes "Why this size and BF16: a decode step must read the weights from memory, not a cache, on the CPUs specd is benchmarked on (32 MiB of L3 per CCD on the AMD EPYC kind). The shapes measured before training are in \`reports/bench/large-target-shapes.txt\` (\`scripts/large_pair_shapes.sh\`); docs/models.md says what was chosen and why."
echo "train_large_pair: wrote $target and $draft (state kept in $state)" >&2
