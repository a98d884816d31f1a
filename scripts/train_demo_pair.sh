#!/usr/bin/env bash
# Trains the demo pair from scratch on the demo corpus and writes its model cards:
#   1. the target (Llama, 6 layers, hidden 256, ~5.5M parameters, tied embeddings);
#   2. the draft (2 layers, hidden 128, ~0.9M parameters), distilled from the target;
#   3. specd-train eval: both perplexities, greedy agreement, expected acceptance (runtime forward);
#   4. greedy samples of the target with specd generate;
#   5. data/models/demo-{target,draft}/MODEL_CARD.md from the figures above.
# Resumable: run it again after an interruption (Ctrl-C saves the state) and every finished step
# is kept (state in $STATE, outside git; remove it to start over, e.g. after changing the target).
# Wall time on 2 shared cores: about 24 min when they are idle (target 2,300 tokens/s, distilled
# draft 3,700 tokens/s), up to about 40 min when other work shares them.
# Training must not run in CI: CI uses the committed pair.
#
# Needs: scripts/build.sh (specd, specd-train), data/corpus/build/{train,eval}.txt
# (scripts/corpus/fetch_corpus.sh) and data/tokenizer/tokenizer.json.
# Knobs (environment): BUILD, STATE, MODELS, THREADS, TARGET_STEPS, DRAFT_STEPS, DISTILL_WEIGHT
# (0 trains the draft on the labels alone), EVAL_TOKENS.
set -euo pipefail
cd "$(dirname "$0")/.."

build=${BUILD:-build}
state=${STATE:-$build/train-demo}
models=${MODELS:-data/models}
threads=${THREADS:-2}
target_steps=${TARGET_STEPS:-600}
draft_steps=${DRAFT_STEPS:-300}
distill_weight=${DISTILL_WEIGHT:-0.5}
eval_tokens=${EVAL_TOKENS:-65536}

train_bin=$build/training/specd-train
specd_bin=$build/cli/specd
corpus=data/corpus/build
tokenizer=data/tokenizer/tokenizer.json
target=$models/demo-target
draft=$models/demo-draft
for f in "$train_bin" "$specd_bin" "$corpus/train.txt" "$corpus/eval.txt" "$tokenizer"; do
  [ -e "$f" ] || { echo "train_demo_pair: missing $f (see the comment at the top)" >&2; exit 2; }
done
mkdir -p "$state"

# Both models see 512-token windows (the context they are used at) and 4096 tokens per step.
common=(--text "$corpus/train.txt" --eval-text "$corpus/eval.txt" --tokenizer "$tokenizer"
        --cache-dir "$state/tokens" --context 512 --batch 8 --seq 512 --weight-decay 0.1 --clip 1.0
        --eval-tokens 32768 --checkpoint-every 20 --log-every 10 --seed 1 --threads "$threads" --dtype bf16 --resume)

echo "== target: $target_steps steps ==" >&2
"$train_bin" train --config-out "$target" --state-dir "$state/target" "${common[@]}" \
  --layers 6 --hidden 256 --heads 8 --kv-heads 4 --ffn 704 \
  --steps "$target_steps" --lr 2e-3 --warmup 40 --min-lr 2e-4 --eval-every 100

draft_teacher=()
[ "$distill_weight" != 0 ] && draft_teacher=(--distill-from "$target" --distill-weight "$distill_weight")
echo "== draft: $draft_steps steps ==" >&2
"$train_bin" train --config-out "$draft" --state-dir "$state/draft" "${common[@]}" \
  --layers 2 --hidden 128 --heads 4 --kv-heads 2 --ffn 352 \
  --steps "$draft_steps" --lr 5e-3 --warmup 30 --min-lr 5e-4 --eval-every 100 "${draft_teacher[@]}"

echo "== eval ==" >&2
"$train_bin" eval --target "$target" --draft "$draft" --text "$corpus/eval.txt" --cache-dir "$state/tokens" \
  --tokens "$eval_tokens" --threads "$threads" --json > "$state/pair_eval.json"

echo "== samples ==" >&2
source scripts/lib/pair_samples.sh
write_samples "$specd_bin" "$target" "$threads" "$state/samples.txt"

echo "== model cards ==" >&2
node scripts/lib/model_card.js --target "$target" --draft "$draft" --target-name demo-target --draft-name demo-draft \
  --state "$state" --threads "$threads" --script scripts/train_demo_pair.sh \
  --target-intro "The demo target model of specd: a small Llama trained from scratch on CPU, the default model of \`specd generate\` and \`specd bench\`." \
  --draft-intro "The demo draft model of specd: a smaller Llama with the target's tokenizer, distilled from \`demo-target\`, used to draft for it."
echo "train_demo_pair: wrote $target and $draft (state kept in $state)" >&2
