#!/usr/bin/env node
// Trains the demo byte-level BPE tokenizer on the train split with Hugging Face's tokenizers
// library (Rust, through N-API) and saves it as tokenizer.json.
//
//   node train_tokenizer.js TRAIN_TXT OUT_TOKENIZER_JSON [VOCAB_SIZE=4096]
//
// Pre-tokenization is Qwen2's: a Split on its regex (single digits, whitespace runs kept, newline
// runs on their own) followed by a regex-free ByteLevel, so any text round-trips. No normalizer.
// Special tokens: <|endoftext|> (id 0: end of text and document separator, also prepended as BOS
// when add_special_tokens is true) and <|pad|> (id 1).
//
// The library's JS binding trains with BpeTrainer's defaults (30,000 tokens) and offers no trainer
// options, so this trains with the defaults and keeps the first merges, in the trainer's order,
// until the vocabulary holds VOCAB_SIZE tokens. BPE training is greedy, so those merges are the
// ones a trainer stopped at VOCAB_SIZE would have learnt. All 256 byte symbols are in the
// vocabulary, seen in training or not.
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');

process.env.TOKENIZERS_PARALLELISM = 'false';
const { Tokenizer, byteLevelAlphabet } = require('tokenizers');

const SPECIAL_TOKENS = ['<|endoftext|>', '<|pad|>'];
const SEPARATOR_LINE = '<|endoftext|>';
// Qwen2's pre-tokenizer regex (also Qwen3's).
const SPLIT_REGEX =
  "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*" +
  '|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+';

function pipeline(model) {
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: [],
    normalizer: null,
    pre_tokenizer: {
      type: 'Sequence',
      pretokenizers: [
        { type: 'Split', pattern: { Regex: SPLIT_REGEX }, behavior: 'Isolated', invert: false },
        { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false },
      ],
    },
    post_processor: null,
    decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
    model,
  };
}

function emptyBpe() {
  return {
    type: 'BPE',
    dropout: null,
    unk_token: null,
    continuing_subword_prefix: null,
    end_of_word_suffix: null,
    fuse_unk: false,
    byte_fallback: false,
    ignore_merges: false,
    vocab: {},
    merges: [],
  };
}

// GPT-2's byte-to-symbol table: the symbol of byte b, for b = 0..255.
function byteSymbols() {
  const printable = [];
  for (let b = 0x21; b <= 0x7e; b++) printable.push(b);
  for (let b = 0xa1; b <= 0xac; b++) printable.push(b);
  for (let b = 0xae; b <= 0xff; b++) printable.push(b);
  const symbols = new Array(256);
  let extra = 0;
  for (let b = 0; b < 256; b++) {
    symbols[b] = String.fromCodePoint(printable.includes(b) ? b : 256 + extra++);
  }
  return symbols;
}

// The trainer reads its input line by line; documents are separated by a line that would
// otherwise be learnt as text, so it is dropped.
function writeTrainerInput(trainTxt, dir) {
  const text = fs.readFileSync(trainTxt, 'utf8');
  const out = path.join(dir, 'trainer-input.txt');
  fs.writeFileSync(out, text.split(`\n${SEPARATOR_LINE}\n`).join('\n'));
  return out;
}

function truncatedModel(trained, vocabSize) {
  const merges = trained.model.merges.map((m) => (Array.isArray(m) ? m : m.split(' ')));
  const vocab = {};
  const add = (token) => {
    if (!(token in vocab)) vocab[token] = Object.keys(vocab).length;
  };
  SPECIAL_TOKENS.forEach(add);
  byteSymbols().forEach(add);
  const kept = [];
  for (const [a, b] of merges) {
    if (Object.keys(vocab).length >= vocabSize) break;
    if (!(a in vocab) || !(b in vocab)) throw new Error(`merge ${a} ${b} uses an unknown token`);
    add(a + b);
    kept.push([a, b]);
  }
  if (Object.keys(vocab).length !== vocabSize) {
    throw new Error(`only ${Object.keys(vocab).length} tokens after all merges`);
  }
  return { ...emptyBpe(), vocab, merges: kept };
}

function main() {
  const [trainTxt, outPath, vocabArg] = process.argv.slice(2);
  if (!trainTxt || !outPath) {
    process.stderr.write('usage: node train_tokenizer.js TRAIN_TXT OUT_TOKENIZER_JSON [VOCAB_SIZE]\n');
    process.exit(2);
  }
  const vocabSize = Number(vocabArg || 4096);
  const symbols = byteSymbols();
  const alphabet = new Set(byteLevelAlphabet());
  if (alphabet.size !== 256 || !symbols.every((s) => alphabet.has(s))) {
    throw new Error('byte symbol table differs from the library byte-level alphabet');
  }

  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'specd-tokenizer-'));
  try {
    const input = writeTrainerInput(trainTxt, scratch);
    const started = Date.now();
    const tokenizer = Tokenizer.fromString(JSON.stringify(pipeline(emptyBpe())));
    tokenizer.train([input]);
    const trainedPath = path.join(scratch, 'trained.json');
    tokenizer.save(trainedPath);
    const trained = JSON.parse(fs.readFileSync(trainedPath, 'utf8'));
    process.stderr.write(
      `train_tokenizer: trained ${Object.keys(trained.model.vocab).length} tokens, ` +
        `${trained.model.merges.length} merges in ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
    );

    const config = pipeline(truncatedModel(trained, vocabSize));
    config.added_tokens = SPECIAL_TOKENS.map((content, id) => ({
      id,
      content,
      single_word: false,
      lstrip: false,
      rstrip: false,
      normalized: false,
      special: true,
    }));
    config.post_processor = {
      type: 'TemplateProcessing',
      single: [{ SpecialToken: { id: SPECIAL_TOKENS[0], type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }],
      pair: [
        { SpecialToken: { id: SPECIAL_TOKENS[0], type_id: 0 } },
        { Sequence: { id: 'A', type_id: 0 } },
        { SpecialToken: { id: SPECIAL_TOKENS[0], type_id: 1 } },
        { Sequence: { id: 'B', type_id: 1 } },
      ],
      special_tokens: {
        [SPECIAL_TOKENS[0]]: { id: SPECIAL_TOKENS[0], ids: [0], tokens: [SPECIAL_TOKENS[0]] },
      },
    };
    // Let the library write the file, so it is in the library's own canonical form.
    fs.mkdirSync(path.dirname(path.resolve(outPath)), { recursive: true });
    Tokenizer.fromString(JSON.stringify(config)).save(outPath, true);
    const saved = Tokenizer.fromFile(outPath);
    process.stderr.write(
      `train_tokenizer: wrote ${outPath}: ${saved.getVocabSize(true)} tokens, ` +
        `${config.model.merges.length} merges\n`,
    );
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

main();
