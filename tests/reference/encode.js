#!/usr/bin/env node
// Reference ids from Hugging Face's own tokenizers library (Rust, through N-API) for a corpus.
//
//   node encode.js TOKENIZER_JSON CORPUS_TXT OUT_JSONL [--no-special]
//
// Writes one JSON record per corpus line, then one per block of consecutive lines joined with
// "\n" or "\r\n" (single lines never hold a newline, and newlines matter to the pre-tokenizers):
//   {"first_line":N,"last_line":M,"text":...,"add_special_tokens":bool,"ids":[...],
//    "decoded":...,"decoded_skip_special":...}
// The decodes are HF's decode(ids, false) and decode(ids, true) of those same ids; each is left
// out where it equals "text", which keeps the committed golden files small.
'use strict';
const fs = require('fs');
const path = require('path');
const { Tokenizer } = require(path.join(__dirname, 'node_modules', 'tokenizers'));

const BLOCK_LINES = 8;
const BATCH = 512;

function usage() {
  process.stderr.write('usage: node encode.js TOKENIZER_JSON CORPUS_TXT OUT_JSONL [--no-special]\n');
  process.exit(2);
}

function corpusRecords(text) {
  const lines = text.split('\n');
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  const records = lines.map((line, i) => ({ first_line: i + 1, last_line: i + 1, text: line }));
  for (let start = 0, block = 0; start < lines.length; start += BLOCK_LINES, block++) {
    const part = lines.slice(start, start + BLOCK_LINES);
    const separator = block % 3 === 2 ? '\r\n' : '\n';
    const trailer = block % 5 === 4 ? '\n\n' : '';
    records.push({
      first_line: start + 1,
      last_line: start + part.length,
      text: part.join(separator) + trailer,
    });
  }
  return records;
}

async function main() {
  const args = process.argv.slice(2);
  const addSpecialTokens = !args.includes('--no-special');
  const positional = args.filter((a) => !a.startsWith('--'));
  if (positional.length !== 3) usage();
  const [tokenizerPath, corpusPath, outPath] = positional;

  const tokenizer = Tokenizer.fromFile(tokenizerPath);
  const records = corpusRecords(fs.readFileSync(corpusPath, 'utf8'));
  const out = [];
  for (let i = 0; i < records.length; i += BATCH) {
    const batch = records.slice(i, i + BATCH);
    const encodings = await tokenizer.encodeBatch(batch.map((r) => r.text), { addSpecialTokens });
    const ids = encodings.map((e) => e.getIds());
    const decoded = await tokenizer.decodeBatch(ids, false);
    const decodedSkip = await tokenizer.decodeBatch(ids, true);
    batch.forEach((r, j) => {
      const record = { ...r, add_special_tokens: addSpecialTokens, ids: ids[j] };
      if (decoded[j] !== r.text) record.decoded = decoded[j];
      if (decodedSkip[j] !== r.text) record.decoded_skip_special = decodedSkip[j];
      out.push(JSON.stringify(record));
    });
  }
  fs.writeFileSync(outPath, out.join('\n') + '\n');
  process.stderr.write(`encode.js: ${records.length} records -> ${outPath}\n`);
}

main().catch((err) => {
  process.stderr.write(`encode.js: ${err.stack || err}\n`);
  process.exit(1);
});
