#!/usr/bin/env node
// Builds tests/fixtures/tokenizer_corpus.txt from fixed files of a Debian 12 machine plus the
// hand-written edge cases beside this script. The corpus is committed; this script records how
// it was made and rebuilds it byte for byte on a machine with the same package versions.
//
//   node make_corpus.js OUT_TXT
//
// Sources and licenses are listed in tests/fixtures/README.md.
'use strict';
const fs = require('fs');
const path = require('path');

function readLines(file, first = 1, last = Infinity) {
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines.slice(first - 1, Math.min(last, lines.length));
}

// GNU gettext .mo: a header, then two tables of (length, offset) for originals and translations.
function moTranslations(file) {
  const buf = fs.readFileSync(file);
  const magic = buf.readUInt32LE(0);
  const read = magic === 0x950412de ? (o) => buf.readUInt32LE(o) : (o) => buf.readUInt32BE(o);
  const count = read(8);
  const translationsAt = read(16);
  const out = [];
  for (let i = 0; i < count; i++) {
    const length = read(translationsAt + 8 * i);
    const offset = read(translationsAt + 8 * i + 4);
    const text = buf.toString('utf8', offset, offset + length);
    if (text.startsWith('Project-Id-Version') || text.length === 0) continue;
    out.push(...text.split('\0'));
  }
  return out;
}

function moLines(lang, domain, entries) {
  const file = `/usr/share/locale/${lang}/LC_MESSAGES/${domain}.mo`;
  const lines = [];
  for (const text of moTranslations(file).slice(0, entries)) {
    lines.push(...text.replace(/\r/g, '').split('\n'));
  }
  return lines;
}

// Country names, several to a line so each line mixes words, commas and spaces of one script.
function countryNameLines(lang, lineCount, namesPerLine) {
  const names = moTranslations(`/usr/share/locale/${lang}/LC_MESSAGES/iso_3166-1.mo`);
  const lines = [];
  for (let i = 0; i < lineCount; i++) {
    const slice = names.slice(i * namesPerLine, (i + 1) * namesPerLine);
    if (slice.length > 0) lines.push(slice.join(', '));
  }
  return lines;
}

function corpus() {
  const lines = [];
  // Code.
  lines.push(...readLines('/usr/lib/python3.11/heapq.py'));
  lines.push(...readLines('/usr/lib/python3.11/json/decoder.py'));
  lines.push(...readLines('/usr/include/argp.h', 1, 200));
  lines.push(...readLines('/usr/include/sqlite3.h', 1, 160));
  lines.push(...readLines('/usr/include/zlib.h', 1, 150));
  // English prose.
  lines.push(...readLines('/usr/share/common-licenses/Apache-2.0'));
  // Translations: CJK, Cyrillic, Greek, Latin with diacritics.
  for (const lang of ['ja', 'zh_CN', 'zh_TW', 'ko', 'ru', 'uk', 'el', 'de', 'vi', 'tr']) {
    lines.push(...moLines(lang, 'coreutils', 25));
  }
  // Many scripts: Arabic, Hebrew, Indic, Southeast Asian, Caucasian, Ethiopic, ...
  for (const lang of ['ar', 'fa', 'ur', 'he', 'hi', 'bn', 'ta', 'te', 'ml', 'si', 'th', 'lo',
    'km', 'my', 'ka', 'hy', 'am', 'iu', 'chr', 'dv']) {
    lines.push(...countryNameLines(lang, 5, 6));
  }
  // Markdown with symbols and long runs of spaces.
  lines.push(...readLines('/usr/share/doc/nodejs/api/punycode.md'));
  lines.push(...readLines('/usr/share/doc/nodejs/api/webcrypto.md').filter((l) => l.includes('✔')).slice(0, 24));
  // Hand-written edge cases: emoji, whitespace runs, special-token look-alikes, NFC cases.
  lines.push(...readLines(path.join(__dirname, 'edge_cases.txt')));
  return lines;
}

function main() {
  if (process.argv.length !== 3) {
    process.stderr.write('usage: node make_corpus.js OUT_TXT\n');
    process.exit(2);
  }
  // One blank line is as good a test as ten in a row.
  const lines = corpus().map((l) => l.replace(/\r/g, ''))
    .filter((l, i, all) => l !== '' || i === 0 || all[i - 1] !== '');
  fs.writeFileSync(process.argv[2], lines.join('\n') + '\n');
  process.stderr.write(`make_corpus.js: ${lines.length} lines -> ${process.argv[2]}\n`);
}

main();
