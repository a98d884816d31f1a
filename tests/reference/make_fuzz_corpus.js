#!/usr/bin/env node
// Writes a seeded, reproducible corpus of random mixtures of the fragments tokenizers trip on:
// whitespace of every kind, contractions, digits, scripts, emoji, combining marks, and the
// text of special tokens glued to other text. The live check runs it besides the real corpus.
//
//   node make_fuzz_corpus.js OUT_TXT [LINES] [SEED]
'use strict';
const fs = require('fs');

const fragments = [
  ' ', ' ', ' ', '  ', '\t', '\r', '\u00A0', '\u3000', '\u2028', '\u0085', '\u180E', '\u200B', '\f', '\v',
  'a', 'b', 'Hello', 'world', 'The', 'DON', "'", "'s", "'T", "'ll", "'re", 'ſ', 'K', 'ß', 'İ',
  '0', '1', '23', '4567', '١٢', '½', '²', '.', ',', '!', '?', '...', '-', '_', '(', ')', '{', '}',
  '#', '@', '$', '%', '&', '*', '"', '`', '\\', '/',
  '日本', '語', '中文', '한국어', 'Привет', 'Ελλάδα', 'עברית', 'العربية', 'नमस्ते', 'ไทย',
  '😀', '👍🏽', '👩‍👩‍👧', '🇩🇪', '❤️', '𝔘', '𠀀', '\uE000', '\uFFFD', 'e\u0301', '\u1100\u1161',
  '\u2126', 'ﬁ', '\u0301',
  '<s>', '</s>', '<unk>', '<|im_start|>', '<|im_end|>', '<|endoftext|>', '<think>', '</think>',
  '<|begin_of_text|>', '<|eot_id|>', '<0x41>', '▁', '▁▁', '<', '|', '>', 'Hello World',
  'def', 'return', 'int', 'x', '=', '==', '->', '::', '//', '/*', '*/', '    ', '        ', '\t\t',
];

function main() {
  const [outPath, lineCount = '3000', seedText = '20240601'] = process.argv.slice(2);
  if (!outPath) {
    process.stderr.write('usage: node make_fuzz_corpus.js OUT_TXT [LINES] [SEED]\n');
    process.exit(2);
  }
  let state = Number(seedText) % 2147483648;
  const random = () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648;
  };
  const lines = [];
  for (let i = 0; i < Number(lineCount); i++) {
    let line = '';
    for (let length = Math.floor(random() * 30); length > 0; length--) {
      line += fragments[Math.floor(random() * fragments.length)];
    }
    lines.push(line);
  }
  fs.writeFileSync(outPath, lines.join('\n') + '\n');
  process.stderr.write(`make_fuzz_corpus.js: ${lines.length} lines -> ${outPath}\n`);
}

main();
