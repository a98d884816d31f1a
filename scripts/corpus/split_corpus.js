#!/usr/bin/env node
// Cuts the unpacked corpus packages into documents and splits them by document into
// train / calibration / eval.
//
//   node split_corpus.js ROOT OUT_DIR HELDOUT_TXT
//
// ROOT is where fetch_corpus.sh unpacked the role "corpus" packages. Writes, in OUT_DIR:
//   train.txt, calibration.txt, eval.txt  every document followed by a line "<|endoftext|>"
//   {split}.docs.tsv                      id, bytes, sha256 of each document, in file order
//   splits.json                           per split: documents, bytes, sha256 of the .txt
// Same inputs, same bytes: documents are ordered by their split hash, never by file system order.
'use strict';
const crypto = require('crypto');
const fs = require('fs');
const path = require('path');
const zlib = require('zlib');

const SEPARATOR = '<|endoftext|>';
const SPLITS = ['train', 'calibration', 'eval'];
const SPLIT_SALT = 'specd-corpus-split-v1\0';

function sha256(data) {
  return crypto.createHash('sha256').update(data).digest('hex');
}

function walk(dir) {
  const out = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...walk(full));
    else if (entry.isFile()) out.push(full);
  }
  return out.sort();
}

// Strict UTF-8: a file that is not valid UTF-8 is left out rather than mangled.
function readUtf8(file) {
  const bytes = fs.readFileSync(file);
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch (err) {
    process.stderr.write(`split_corpus: not UTF-8, left out: ${file}\n`);
    return null;
  }
}

// Python standard library sources. Generated tables (the gencodec.py charmap codecs and the
// Sphinx-generated pydoc topics) are left out: they are data, not code anyone wrote.
function pythonLibDocuments(root) {
  const base = path.join(root, 'usr/lib/python3.11');
  const docs = [];
  for (const file of walk(base)) {
    if (!file.endsWith('.py')) continue;
    const rel = path.relative(base, file);
    if (rel === 'pydoc_data/topics.py') continue;
    const text = readUtf8(file);
    if (text === null || text.trim() === '') continue;
    if (rel.startsWith('encodings/') && text.includes('with gencodec.py')) continue;
    docs.push({ id: `python-lib:${rel}`, text });
  }
  return docs;
}

// reStructuredText sources of the Python documentation, one page per document.
function pythonDocDocuments(root) {
  const base = path.join(root, 'usr/share/doc/python3.11/html/_sources');
  const docs = [];
  for (const file of walk(base)) {
    if (!file.endsWith('.rst.txt')) continue;
    const text = readUtf8(file);
    if (text === null || text.trim() === '') continue;
    docs.push({ id: `python-doc:${path.relative(base, file)}`, text });
  }
  return docs;
}

// Debian Reference as plain text, one document per numbered section ("1.1.", "A.2."), plus the
// chapter introductions and the front matter. The text renderer pads lines with no-break spaces;
// they become plain spaces.
function debianReferenceDocuments(root) {
  const file = path.join(root, 'usr/share/debian-reference/debian-reference.en.txt.gz');
  const text = zlib.gunzipSync(fs.readFileSync(file)).toString('utf8').replace(/\u00a0/g, ' ');
  const heading = /^(?:(Chapter|Appendix) ([0-9A-Z]+)\.|([0-9A-Z]+\.[0-9]+)\.) /;
  const docs = [];
  let current = { id: 'debian-reference:front', lines: [] };
  const flush = () => {
    const body = current.lines.join('\n').replace(/\s+$/, '') + '\n';
    if (body.trim() !== '') docs.push({ id: current.id, text: body });
  };
  let inBody = false;
  for (const line of text.split('\n')) {
    const match = heading.exec(line);
    // Table-of-contents lines look the same; the body starts at "Chapter 1.".
    if (match && match[1] === 'Chapter' && match[2] === '1') inBody = true;
    if (match && inBody) {
      flush();
      const number = match[2] ? `${match[1].toLowerCase()}-${match[2]}` : match[3];
      current = { id: `debian-reference:${number}`, lines: [] };
    }
    current.lines.push(line);
  }
  flush();
  return docs;
}

function readHeldout(file) {
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
}

function isHeldout(id, patterns) {
  return patterns.some((p) => (p.endsWith('*') ? id.startsWith(p.slice(0, -1)) : id === p));
}

// 90 / 5 / 5 by a hash of the document id; held-out documents always go to eval.
function splitHash(id) {
  return crypto.createHash('sha256').update(SPLIT_SALT + id).digest().readUInt32BE(0);
}

function splitOf(id, heldout) {
  if (isHeldout(id, heldout)) return 'eval';
  const u = splitHash(id) / 2 ** 32;
  return u < 0.9 ? 'train' : u < 0.95 ? 'calibration' : 'eval';
}

function main() {
  const [root, outDir, heldoutFile] = process.argv.slice(2);
  if (!root || !outDir || !heldoutFile) {
    process.stderr.write('usage: node split_corpus.js ROOT OUT_DIR HELDOUT_TXT\n');
    process.exit(2);
  }
  const heldout = readHeldout(heldoutFile);
  const docs = [
    ...pythonLibDocuments(root),
    ...pythonDocDocuments(root),
    ...debianReferenceDocuments(root),
  ];
  const seen = new Set();
  for (const doc of docs) {
    if (seen.has(doc.id)) throw new Error(`duplicate document id ${doc.id}`);
    seen.add(doc.id);
    if (doc.text.includes(SEPARATOR)) throw new Error(`${doc.id} contains ${SEPARATOR}`);
    if (!doc.text.endsWith('\n')) doc.text += '\n';
  }
  for (const pattern of heldout) {
    if (!docs.some((d) => isHeldout(d.id, [pattern]))) {
      process.stderr.write(`split_corpus: held-out entry matches no document: ${pattern}\n`);
    }
  }

  const bySplit = Object.fromEntries(SPLITS.map((s) => [s, []]));
  for (const doc of docs) bySplit[splitOf(doc.id, heldout)].push(doc);

  fs.mkdirSync(outDir, { recursive: true });
  const summary = {
    separator: `each document is followed by a line holding only ${SEPARATOR}`,
    splits: {},
  };
  for (const split of SPLITS) {
    const list = bySplit[split].sort(
      (a, b) => splitHash(a.id) - splitHash(b.id) || (a.id < b.id ? -1 : 1),
    );
    const text = list.map((d) => `${d.text}${SEPARATOR}\n`).join('');
    fs.writeFileSync(path.join(outDir, `${split}.txt`), text);
    const tsv = list
      .map((d) => `${d.id}\t${Buffer.byteLength(d.text)}\t${sha256(d.text)}\n`)
      .join('');
    fs.writeFileSync(path.join(outDir, `${split}.docs.tsv`), tsv);
    const bySource = {};
    for (const d of list) {
      const source = d.id.split(':')[0];
      bySource[source] = (bySource[source] || 0) + 1;
    }
    summary.splits[split] = {
      file: `${split}.txt`,
      documents: list.length,
      documents_by_source: bySource,
      bytes: Buffer.byteLength(text),
      sha256: sha256(text),
      document_list_sha256: sha256(tsv),
    };
  }
  fs.writeFileSync(path.join(outDir, 'splits.json'), JSON.stringify(summary, null, 2) + '\n');
  for (const split of SPLITS) {
    const s = summary.splits[split];
    process.stderr.write(`split_corpus: ${split}: ${s.documents} documents, ${s.bytes} bytes\n`);
  }
}

main();
