#!/usr/bin/env node
// Writes BUILD/MANIFEST.json (every input with version, sha256 and license; every split with its
// sha256) and compares it with the committed manifest.
//
//   node write_manifest.js BUILD_DIR COMMITTED_MANIFEST RECORD(0|1)
//
// RECORD=1 replaces the committed manifest. Otherwise each difference is a warning, or a failure
// when SPECD_CORPUS_STRICT=1.
'use strict';
const fs = require('fs');
const path = require('path');

function readTsv(file, columns) {
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      const cells = line.split('\t');
      return Object.fromEntries(columns.map((c, i) => [c, cells[i]]));
    });
}

function buildManifest(build) {
  const debs = readTsv(path.join(build, 'debs.tsv'), [
    'role', 'package', 'pinned_version', 'version', 'sha256', 'file', 'license', 'used',
  ]);
  const sources = readTsv(path.join(build, 'sources.tsv'), [
    'role', 'package', 'pinned_version', 'version', 'file', 'sha256', 'license', 'used',
  ]);
  const splits = JSON.parse(fs.readFileSync(path.join(build, 'splits.json'), 'utf8'));
  return {
    schema: 'specd-corpus-manifest-1',
    recipe: 'scripts/corpus/fetch_corpus.sh',
    archive: 'Debian 12 (bookworm) main and bookworm-security, fetched with apt-get download',
    packages: debs,
    source_packages: sources,
    split_rule:
      'documents listed in scripts/corpus/heldout.txt go to eval; every other document goes by ' +
      'u = first 4 bytes of sha256("specd-corpus-split-v1\\0" + id) / 2^32: ' +
      'train if u < 0.90, calibration if u < 0.95, else eval',
    separator: splits.separator,
    splits: splits.splits,
  };
}

// One entry per package file, per split and per other field, so that differences are listed one
// by one.
function entries(manifest) {
  const out = new Map();
  for (const [key, value] of Object.entries(manifest)) {
    if (Array.isArray(value)) {
      for (const item of value) out.set(`${key}[${item.package} ${item.file}]`, JSON.stringify(item));
    } else if (key === 'splits') {
      for (const [name, split] of Object.entries(value)) out.set(`splits.${name}`, JSON.stringify(split));
    } else {
      out.set(key, JSON.stringify(value));
    }
  }
  return out;
}

function main() {
  const [build, committedPath, record] = process.argv.slice(2);
  const manifest = buildManifest(build);
  const text = JSON.stringify(manifest, null, 2) + '\n';
  fs.writeFileSync(path.join(build, 'MANIFEST.json'), text);
  if (record === '1') {
    fs.writeFileSync(committedPath, text);
    process.stderr.write(`write_manifest: recorded ${committedPath}\n`);
    return;
  }
  if (!fs.existsSync(committedPath)) {
    process.stderr.write(`write_manifest: WARNING: no ${committedPath} to compare with\n`);
    return;
  }
  const want = entries(JSON.parse(fs.readFileSync(committedPath, 'utf8')));
  const got = entries(manifest);
  const differences = [];
  for (const key of new Set([...want.keys(), ...got.keys()])) {
    if (want.get(key) !== got.get(key)) {
      differences.push(`${key}: recorded ${want.get(key)}, now ${got.get(key)}`);
    }
  }
  if (differences.length === 0) {
    process.stderr.write('write_manifest: inputs and splits match the committed manifest\n');
    return;
  }
  for (const d of differences) process.stderr.write(`write_manifest: WARNING: ${d}\n`);
  process.stderr.write(
    `write_manifest: ${differences.length} difference(s) from ${committedPath}; ` +
      'rerun with --record to accept them\n',
  );
  if (process.env.SPECD_CORPUS_STRICT === '1') process.exit(1);
}

main();
