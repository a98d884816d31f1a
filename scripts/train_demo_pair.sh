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
prompts=("import os
import sys


def main():
" "The Debian package management system" "The :mod:\`json\` module")
: > "$state/samples.txt"
for prompt in "${prompts[@]}"; do
  continuation=$("$specd_bin" generate --model "$target" --prompt "$prompt" --max-new-tokens 80 --threads "$threads" 2>/dev/null)
  printf '%s\n' "$prompt$continuation" | node -e '
    const text = require("fs").readFileSync(0, "utf8");
    process.stdout.write(JSON.stringify(text.replace(/\n$/, "")) + "\n");' >> "$state/samples.txt"
done

echo "== model cards ==" >&2
cpu=$(grep -m1 "model name" /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
node - "$target" "$draft" "$state" "$(nproc)" "$cpu" "$threads" <<'EOF'
const fs = require('fs');
const [targetDir, draftDir, stateDir, cores, cpu, threads] = process.argv.slice(2);
const read = (f) => JSON.parse(fs.readFileSync(f, 'utf8'));
const pair = read(`${stateDir}/pair_eval.json`);
const manifest = read('data/corpus/MANIFEST.json');
const samples = fs.readFileSync(`${stateDir}/samples.txt`, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
const fixed = (x, n) => Number(x).toFixed(n);
const minutes = (s) => `${fixed(s / 60, 1)} min`;

function card(dir, role, other) {
  const run = read(`${dir}/training.json`);
  const cfg = read(`${dir}/config.json`);
  const r = run.recipe;
  const rates = run.history.filter((h) => h.tokens_per_second).map((h) => h.tokens_per_second);
  const meanRate = rates.reduce((a, b) => a + b, 0) / Math.max(1, rates.length);
  const evals = run.history.filter((h) => h.eval_loss !== undefined);
  const split = manifest.splits.train;
  const lines = [
    `# demo-${role}`,
    '',
    role === 'target'
      ? 'The demo target model of specd: a small Llama trained from scratch on CPU, the default model of `specd generate` and `specd bench`.'
      : `The demo draft model of specd: a smaller Llama with the target's tokenizer${r.distill_from ? ', distilled from `demo-target`' : ''}, used to draft for it.`,
    'A toy for exercising speculative decoding on real text and code, not a useful language model.',
    '',
    '## Architecture',
    '',
    '| | |',
    '|---|---|',
    `| type | Llama (\`model_type\` llama), tied input/output embeddings |`,
    `| parameters | ${run.parameters.toLocaleString('en-US')} |`,
    `| layers, hidden, ffn | ${cfg.num_hidden_layers}, ${cfg.hidden_size}, ${cfg.intermediate_size} |`,
    `| attention heads, kv heads, head dim | ${cfg.num_attention_heads}, ${cfg.num_key_value_heads}, ${cfg.head_dim} |`,
    `| context | ${cfg.max_position_embeddings} tokens, RoPE θ ${cfg.rope_theta} |`,
    `| vocabulary | ${cfg.vocab_size} (\`data/tokenizer/tokenizer.json\`, byte-level BPE), \`<|endoftext|>\` = ${cfg.eos_token_id} is BOS and EOS |`,
    `| weights | \`model.safetensors\`, ${cfg.torch_dtype} |`,
    '',
    '## Training data',
    '',
    `The train split of the demo corpus (\`data/corpus/\`, see its README and MANIFEST.json): ${split.documents} documents ` +
      `(${Object.entries(split.documents_by_source).map(([k, v]) => `${v} ${k}`).join(', ')}), ` +
      `${fixed(split.bytes / 1e6, 2)} MB, ${r.train_tokens.toLocaleString('en-US')} tokens; sha256 of train.txt ${split.sha256}. ` +
      'Sources: the Python 3.11 standard library and documentation sources (PSF-2.0) and the Debian Reference (GPL-2+), from Debian 12 packages.',
    '',
    '## Training',
    '',
    '| | |',
    '|---|---|',
    `| steps × tokens | ${r.steps} × ${r.batch * r.seq} (${r.batch} windows of ${r.seq}) = ${run.tokens_trained.toLocaleString('en-US')} tokens (${fixed(run.tokens_trained / r.train_tokens, 2)} epochs) |`,
    `| objective | ${r.distill_from ? `(1 − ${r.distill_weight}) · cross-entropy + ${r.distill_weight} · KL(target ‖ draft), teacher \`${r.distill_from}\` frozen` : 'cross-entropy (next token)'} |`,
    `| optimizer | AdamW, β (0.9, 0.95), weight decay ${r.weight_decay} on matrices, gradient clip ${r.clip} |`,
    `| learning rate | linear warmup over ${r.warmup} steps to ${r.lr}, cosine decay to ${r.min_lr} |`,
    `| time | ${minutes(run.train_seconds)} on ${threads} of ${cores} cores of an ${cpu}, ${Math.round(meanRate)} tokens/s mean |`,
    `| seed | ${r.seed} |`,
    '',
    `Evaluation loss during training (${run.eval_tokens.toLocaleString('en-US')} tokens of the eval split, nats/token): ` +
      evals.map((e) => `step ${e.step}: ${fixed(e.eval_loss, 3)}`).join(', ') + '.',
    '',
    '## Evaluation',
    '',
    `On ${pair.tokens.toLocaleString('en-US')} tokens of the eval split (held-out documents), ${pair.chunks} chunks of up to ${pair.context} tokens, with specd's runtime forward:`,
    '',
    '| model | parameters | NLL (nats/token) | perplexity |',
    '|---|---|---|---|',
    `| demo-target | ${pair.target.parameters.toLocaleString('en-US')} | ${fixed(pair.target.nll_nats_per_token, 3)} | ${fixed(pair.target.perplexity, 2)} |`,
    `| demo-draft | ${pair.draft.parameters.toLocaleString('en-US')} | ${fixed(pair.draft.nll_nats_per_token, 3)} | ${fixed(pair.draft.perplexity, 2)} |`,
    '',
    `- draft/target greedy top-1 agreement (same prefix): ${fixed(100 * pair.greedy_agreement, 1)} %`,
    `- expected acceptance of one drafted token at T=1 (mean Σ min(p, q)): ${fixed(100 * pair.expected_acceptance_t1, 1)} %`,
    '',
    'Reproduce: `build/training/specd-train eval --target data/models/demo-target --draft data/models/demo-draft ' +
      `--text data/corpus/build/eval.txt --tokens ${pair.tokens}\``,
    '',
  ];
  if (role === 'target') {
    lines.push('## Samples', '', 'Greedy continuations (`specd generate --max-new-tokens 80`), prompt included:', '');
    for (const s of samples) lines.push('```', s, '```', '');
  }
  lines.push('## Reproduce', '', '`scripts/train_demo_pair.sh` (trains both models, evaluates them and writes these cards).', '');
  fs.writeFileSync(`${dir}/MODEL_CARD.md`, lines.join('\n'));
}
card(targetDir, 'target');
card(draftDir, 'draft');
EOF
echo "train_demo_pair: wrote $target and $draft (state kept in $state)" >&2
