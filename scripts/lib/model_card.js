// Writes MODEL_CARD.md for both models of a trained pair from what the training wrote:
// training.json (recipe, history, wall time), config.json, the pair's evaluation
// (specd-train eval --json) and greedy samples of the target (scripts/lib/pair_samples.sh). Used by scripts/train_demo_pair.sh
// and scripts/train_large_pair.sh; everything it states is read from those files or the machine.
//
// usage: node scripts/lib/model_card.js --target DIR --draft DIR --target-name N --draft-name N
//          --state DIR (holding pair_eval.json and samples.txt, one JSON string per line)
//          --threads N (what training used) --script S (what reproduces the pair)
//          --target-intro TEXT [--draft-intro TEXT] [--target-notes MARKDOWN] [--draft-notes MARKDOWN]
// Without --draft-intro the draft's card is left as it is (a draft trained for another pair).
const fs = require('fs');
const path = require('path');
const os = require('os');

const config = {};
for (let i = 2; i + 1 < process.argv.length; i += 2) config[process.argv[i].replace(/^--/, '').replace(/-/g, '_')] = process.argv[i + 1];
for (const key of ['target', 'draft', 'target_name', 'draft_name', 'state', 'threads', 'script', 'target_intro'])
  if (!config[key]) throw new Error(`model_card.js: --${key.replace(/_/g, '-')} is missing`);
const read = (f) => JSON.parse(fs.readFileSync(f, 'utf8'));
const pair = read(`${config.state}/pair_eval.json`);
const manifest = read('data/corpus/MANIFEST.json');
const samples = fs.readFileSync(`${config.state}/samples.txt`, 'utf8').trim().split('\n').filter((l) => l).map((l) => JSON.parse(l));
const cpu = os.cpus()[0].model.trim();
const cores = os.cpus().length;
const fixed = (x, n) => Number(x).toFixed(n);
const count = (x) => Number(x).toLocaleString('en-US');
const duration = (s) => (s >= 5400 ? `${fixed(s / 3600, 2)} h` : `${fixed(s / 60, 1)} min`);

function weightsText(dir, cfg) {
  const index = `${dir}/model.safetensors.index.json`;
  if (!fs.existsSync(index)) return `\`model.safetensors\`, ${cfg.torch_dtype}`;
  const shards = new Set(Object.values(read(index).weight_map));
  const bytes = [...shards].reduce((sum, f) => sum + fs.statSync(`${dir}/${f}`).size, 0);
  return `${shards.size} safetensors shards (\`model.safetensors.index.json\`), ${cfg.torch_dtype}, ${fixed(bytes / 1e6, 1)} MB`;
}

function card(dir, role) {
  const run = read(`${dir}/training.json`);
  const cfg = read(`${dir}/config.json`);
  const r = run.recipe;
  const rates = run.history.filter((h) => h.tokens_per_second).map((h) => h.tokens_per_second);
  const meanRate = rates.reduce((a, b) => a + b, 0) / Math.max(1, rates.length);
  const evals = run.history.filter((h) => h.eval_loss !== undefined);
  const split = manifest.splits.train;
  const name = config[`${role}_name`];
  const lines = [
    `# ${name}`,
    '',
    config[`${role}_intro`],
    'A toy for exercising speculative decoding on real text and code, not a useful language model.',
    '',
    '## Architecture',
    '',
    '| | |',
    '|---|---|',
    `| type | Llama (\`model_type\` llama), tied input/output embeddings |`,
    `| parameters | ${count(run.parameters)} |`,
    `| layers, hidden, ffn | ${cfg.num_hidden_layers}, ${cfg.hidden_size}, ${cfg.intermediate_size} |`,
    `| attention heads, kv heads, head dim | ${cfg.num_attention_heads}, ${cfg.num_key_value_heads}, ${cfg.head_dim} |`,
    `| context | ${cfg.max_position_embeddings} tokens, RoPE θ ${cfg.rope_theta} |`,
    `| vocabulary | ${cfg.vocab_size} (\`data/tokenizer/tokenizer.json\`, byte-level BPE), \`<|endoftext|>\` = ${cfg.eos_token_id} is BOS and EOS |`,
    `| weights | ${weightsText(dir, cfg)} |`,
    '',
  ];
  if (config[`${role}_notes`]) lines.push(config[`${role}_notes`].trim(), '');
  lines.push(
    '## Training data',
    '',
    `The train split of the demo corpus (\`data/corpus/\`, see its README and MANIFEST.json): ${split.documents} documents ` +
      `(${Object.entries(split.documents_by_source).map(([k, v]) => `${v} ${k}`).join(', ')}), ` +
      `${fixed(split.bytes / 1e6, 2)} MB, ${count(r.train_tokens)} tokens; sha256 of train.txt ${split.sha256}. ` +
      'Sources: the Python 3.11 standard library and documentation sources (PSF-2.0) and the Debian Reference (GPL-2+), from Debian 12 packages.',
    '',
    '## Training',
    '',
    '| | |',
    '|---|---|',
  );
  if (r.grow_from) {
    // Grown to another shape, or started from the same shape (a copy of its weights).
    const from = JSON.parse(fs.readFileSync(path.join(r.grow_from, 'config.json'), 'utf8'));
    const same = ['num_hidden_layers', 'hidden_size', 'intermediate_size', 'num_attention_heads'].every((k) => from[k] === cfg[k]);
    lines.push(same
      ? `| initialisation | the weights of \`${r.grow_from}\` (same shape; \`specd-train --grow-from\`) |`
      : `| initialisation | \`${r.grow_from}\` grown to this shape by \`specd-train --grow-from\` (Net2Net width and depth growth: the same function at step 0) |`);
  }
  lines.push(
    `| steps × tokens | ${r.steps} × ${r.batch * r.seq} (${r.batch} windows of ${r.seq}) = ${count(run.tokens_trained)} tokens (${fixed(run.tokens_trained / r.train_tokens, 2)} epochs) |`,
    `| objective | ${r.distill_from ? `(1 − ${r.distill_weight}) · cross-entropy + ${r.distill_weight} · KL(target ‖ draft), teacher \`${r.distill_from}\` frozen` : 'cross-entropy (next token)'} |`,
    `| optimizer | AdamW, β (0.9, 0.95), weight decay ${r.weight_decay} on matrices, gradient clip ${r.clip} |`,
    `| learning rate | linear warmup over ${r.warmup} steps to ${r.lr}, cosine decay to ${r.min_lr} |`,
    `| time | ${duration(run.train_seconds)} on ${config.threads} of ${cores} cores of an ${cpu}, ${Math.round(meanRate)} tokens/s mean |`,
    `| seed | ${r.seed} |`,
    '',
    `Evaluation loss during training (${count(run.eval_tokens)} tokens of the eval split, nats/token): ` +
      evals.map((e) => `step ${e.step}: ${fixed(e.eval_loss, 3)}`).join(', ') + '.',
    '',
    '## Evaluation',
    '',
    `On ${count(pair.tokens)} tokens of the eval split (held-out documents), ${pair.chunks} chunks of up to ${pair.context} tokens, with specd's runtime forward:`,
    '',
    '| model | parameters | NLL (nats/token) | perplexity |',
    '|---|---|---|---|',
    `| ${config.target_name} | ${count(pair.target.parameters)} | ${fixed(pair.target.nll_nats_per_token, 3)} | ${fixed(pair.target.perplexity, 2)} |`,
    `| ${config.draft_name} | ${count(pair.draft.parameters)} | ${fixed(pair.draft.nll_nats_per_token, 3)} | ${fixed(pair.draft.perplexity, 2)} |`,
    '',
    `- draft/target greedy top-1 agreement (same prefix): ${fixed(100 * pair.greedy_agreement, 1)} %`,
    `- expected acceptance of one drafted token at T=1 (mean Σ min(p, q)): ${fixed(100 * pair.expected_acceptance_t1, 1)} %`,
    '',
    `Reproduce: \`build/training/specd-train eval --target ${config.target} --draft ${config.draft} ` +
      `--text data/corpus/build/eval.txt --tokens ${pair.tokens}\``,
    '',
  );
  if (role === 'target') {
    lines.push('## Samples', '', 'Greedy continuations (`specd generate --max-new-tokens 80`), prompt included:', '');
    for (const s of samples) lines.push('```', s, '```', '');
  }
  lines.push('## Reproduce', '', `\`${config.script}\` (trains the pair's models, evaluates the pair and writes the cards).`, '');
  fs.writeFileSync(`${dir}/MODEL_CARD.md`, lines.join('\n'));
}

card(config.target, 'target');
if (config.draft_intro) card(config.draft, 'draft');
