'use strict';
// Shared by the workload builders: stable ordering, whitespace handling, token budgets.
const crypto = require('crypto');
const fs = require('fs');
const path = require('path');
const zlib = require('zlib');

process.env.TOKENIZERS_PARALLELISM = 'false';
const { Tokenizer } = require('tokenizers');

// The demo model's context, and room left for a runner's separators between turns.
const CONTEXT_TOKENS = 512;
const MARGIN_TOKENS = 8;

function sha256(text) {
  return crypto.createHash('sha256').update(text).digest('hex');
}

// A fixed pseudo-random order: by the hash of a key, ties by the key.
function stableShuffle(items, keyOf) {
  return items
    .map((item) => ({ item, key: keyOf(item), h: sha256(`specd-workloads-v1\0${keyOf(item)}`) }))
    .sort((a, b) => (a.h < b.h ? -1 : a.h > b.h ? 1 : a.key < b.key ? -1 : 1))
    .map((x) => x.item);
}

function readText(file) {
  const bytes = fs.readFileSync(file);
  const text = file.endsWith('.gz') ? zlib.gunzipSync(bytes) : bytes;
  return text.toString('utf8').replace(/\u00a0/g, ' ');
}

// Blank-line separated blocks; each block's lines are trimmed and joined with single spaces.
function paragraphs(lines) {
  const out = [];
  let current = [];
  for (const line of [...lines, '']) {
    if (line.trim() === '') {
      if (current.length) out.push(current.join(' '));
      current = [];
    } else {
      current.push(line.trim());
    }
  }
  return out;
}

function collapse(text) {
  return text.replace(/\s+/g, ' ').trim();
}

class TokenCounter {
  constructor(tokenizerPath) {
    this.tokenizer = Tokenizer.fromFile(tokenizerPath);
  }

  // Tokens of a prompt as a runner encodes it: with the BOS that add_special_tokens prepends.
  async count(text) {
    return (await this.tokenizer.encode(text, null, { addSpecialTokens: true })).getLength();
  }

  // Prompt tokens of a workload item (all turns for a multi-turn one), or null when the prompt
  // plus max_new_tokens per turn does not fit the context.
  async fit(item) {
    const turns = item.turns || [item.prompt];
    let total = 0;
    for (const turn of turns) total += await this.count(turn);
    total -= turns.length - 1; // one BOS for the whole conversation
    const budget = CONTEXT_TOKENS - MARGIN_TOKENS - turns.length * item.max_new_tokens;
    return total <= budget ? total : null;
  }
}

function writeJsonl(file, items) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, items.map((item) => JSON.stringify(item)).join('\n') + '\n');
}

module.exports = {
  CONTEXT_TOKENS,
  MARGIN_TOKENS,
  TokenCounter,
  collapse,
  paragraphs,
  readText,
  sha256,
  stableShuffle,
  writeJsonl,
};
