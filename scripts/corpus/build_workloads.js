#!/usr/bin/env node
// Builds the workload suite (data/workloads/*.jsonl) from held-out documents and the calibration
// prompt set (data/calibration/prompts.jsonl) from the calibration split only.
//
//   node build_workloads.js [BUILD_DIR] [REPO_DIR]
//
// BUILD_DIR is what fetch_corpus.sh wrote (default data/corpus/build). Every prompt is sized with
// the demo tokenizer so that prompt + max_new_tokens (per turn) fits a 512-token context.
// Same inputs, same bytes.
'use strict';
const fs = require('fs');
const path = require('path');
const { TokenCounter, collapse, readText, stableShuffle, writeJsonl } = require('./workloads/common');
const src = require('./workloads/sources');

const PER_CATEGORY = 40;
const repo = path.resolve(process.argv[3] || path.join(__dirname, '../..'));
const build = path.resolve(process.argv[2] || path.join(repo, 'data/corpus/build'));
const corpusRoot = path.join(build, 'root-corpus');
const workRoot = path.join(build, 'root-workload');
const pyDocs = path.join(corpusRoot, 'usr/share/doc/python3.11/html/_sources');
const pyLib = path.join(corpusRoot, 'usr/lib/python3.11');
const faqDir = path.join(workRoot, 'usr/share/doc/debian/FAQ');
const pySrc = path.join(workRoot, 'src/python3.11');

const LICENSES = {
  python: 'PSF-2.0',
  debianFaq: 'Debian FAQ permission notice (verbatim and modified copies; see data/workloads/README.md)',
  maxima: 'GPL-2',
  bsdgames: 'BSD-3-Clause',
};

// Package versions as fetched, for the "source" field.
function versions() {
  const out = {};
  for (const file of ['debs.tsv', 'sources.tsv']) {
    const p = path.join(build, file);
    if (!fs.existsSync(p)) continue;
    for (const line of fs.readFileSync(p, 'utf8').split('\n').filter(Boolean)) {
      const cells = line.split('\t');
      out[cells[1]] = cells[3];
    }
  }
  return out;
}
const VERSION = versions();
const from = (pkg, what) => `${pkg} ${VERSION[pkg]}: ${what}`;

function splitIds(split) {
  return fs
    .readFileSync(path.join(build, `${split}.docs.tsv`), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => line.split('\t')[0]);
}
const EVAL_IDS = new Set(splitIds('eval'));

function requireEval(id) {
  if (!EVAL_IDS.has(id)) throw new Error(`${id} is not in the eval split`);
}

// Takes items from several candidate lists in turn (each already in its final order) until
// `limit` fit the context; returns them with their prompt token counts.
async function takeFitting(counter, lists, limit) {
  const out = [];
  const cursors = lists.map(() => 0);
  let progress = true;
  while (out.length < limit && progress) {
    progress = false;
    for (let k = 0; k < lists.length && out.length < limit; k++) {
      while (cursors[k] < lists[k].length) {
        const item = lists[k][cursors[k]++];
        const tokens = await counter.fit(item);
        if (tokens === null) continue;
        out.push({ ...item, prompt_tokens: tokens });
        progress = true;
        break;
      }
    }
  }
  return out;
}

function truncateWords(text, maxChars) {
  if (text.length <= maxChars) return text;
  return text.slice(0, maxChars).replace(/\s+\S*$/, '') + ' ...';
}

// --- question sources (shared by qa, multi_turn and rag, which use disjoint questions) ---------

function debianFaqQuestions() {
  return src
    .debianFaqSections(path.join(faqDir, 'debian-faq.en.txt.gz'))
    .filter((s) => s.title.endsWith('?') && s.paragraphs.length > 0)
    .map((s, index) => ({
      index,
      chapter: `debian-faq ${s.chapter}`,
      question: s.title,
      answer: s.paragraphs.join('\n\n'),
      source: from('debian-faq', `debian-faq.en.txt.gz section ${s.number}`),
      license: LICENSES.debianFaq,
      intro: 'Questions and answers from the Debian GNU/Linux FAQ.',
    }));
}

function pythonFaqQuestionsAll() {
  const files = fs.readdirSync(path.join(pyDocs, 'faq')).filter((f) => f.endsWith('.rst.txt')).sort();
  const out = [];
  for (const file of files) {
    requireEval(`python-doc:faq/${file}`);
    for (const q of src.pythonFaqQuestions(path.join(pyDocs, 'faq', file))) {
      out.push({
        index: out.length,
        chapter: `python-faq ${file}`,
        question: q.question,
        answer: q.answer,
        source: from('python3.11-doc', `faq/${file}: "${q.question}"`),
        license: LICENSES.python,
        intro: `Questions and answers from the Python documentation's ${q.page}.`,
      });
    }
  }
  return out;
}

// Question i goes to qa when i % 4 == 0, to rag when i % 4 == 3, and (i, i + 1) with
// i % 4 == 1 to multi_turn: no question is used twice.
const role = (q) => ['qa', 'multi_turn', 'multi_turn_follow', 'rag'][q.index % 4];

async function buildQa(counter, sources) {
  const lists = sources.map((questions, s) =>
    stableShuffle(
      questions.filter((q) => role(q) === 'qa'),
      (q) => `qa ${s} ${q.index}`,
    ).map((q) => ({
      category: 'qa',
      prompt: `${q.intro}\n\nQ: ${q.question}\nA:`,
      max_new_tokens: 128,
      reference: truncateWords(q.answer, 600),
      source: q.source,
      license: q.license,
    })),
  );
  return takeFitting(counter, lists, PER_CATEGORY);
}

async function buildMultiTurn(counter, sources) {
  const lists = sources.map((questions, s) => {
    const pairs = [];
    for (const q of questions) {
      const next = questions[q.index + 1];
      if (role(q) !== 'multi_turn' || !next || next.chapter !== q.chapter) continue;
      pairs.push({
        category: 'multi_turn',
        turns: [`${q.intro}\n\nQ: ${q.question}\nA:`, `Q: ${next.question}\nA:`],
        max_new_tokens: 96,
        references: [truncateWords(q.answer, 400), truncateWords(next.answer, 400)],
        source: `${q.source}; ${next.source.replace(/^[^:]*: /, '')}`,
        license: q.license,
      });
    }
    return stableShuffle(pairs, (p) => `multi ${s} ${p.source}`);
  });
  return takeFitting(counter, lists, PER_CATEGORY);
}

// --- rag: BM25 over passages, top passages prepended to the question ----------------------------

const STOPWORDS = new Set(
  'a an and are as at be by can do does for from how i if in is it its my of on or that the this to what when where which why with you your'.split(' '),
);
const terms = (text) => (text.toLowerCase().match(/[a-z0-9_]+/g) || []).filter((t) => !STOPWORDS.has(t));

class Bm25 {
  constructor(passages) {
    this.passages = passages;
    this.docs = passages.map((p) => terms(p.text));
    this.avg = this.docs.reduce((n, d) => n + d.length, 0) / this.docs.length;
    this.df = new Map();
    for (const d of this.docs) for (const t of new Set(d)) this.df.set(t, (this.df.get(t) || 0) + 1);
  }

  top(query, k) {
    const q = [...new Set(terms(query))];
    const n = this.docs.length;
    const scored = this.docs.map((d, i) => {
      const tf = new Map();
      for (const t of d) tf.set(t, (tf.get(t) || 0) + 1);
      let score = 0;
      for (const t of q) {
        const f = tf.get(t) || 0;
        if (!f) continue;
        const idf = Math.log(1 + (n - this.df.get(t) + 0.5) / (this.df.get(t) + 0.5));
        score += (idf * f * 2.2) / (f + 1.2 * (0.25 + 0.75 * (d.length / this.avg)));
      }
      return { i, score };
    });
    scored.sort((a, b) => b.score - a.score || a.i - b.i);
    return scored.slice(0, k).filter((s) => s.score > 0).map((s) => this.passages[s.i]);
  }
}

// Passages of up to about 70 words: consecutive paragraphs of one section merged.
function chunk(paragraphs, label, maxWords = 70) {
  const out = [];
  let current = [];
  let words = 0;
  for (const p of paragraphs) {
    const n = p.split(/\s+/).length;
    if (words > 0 && words + n > maxWords) {
      out.push({ label, text: current.join(' ') });
      current = [];
      words = 0;
    }
    current.push(n > maxWords ? truncateWords(p, maxWords * 7) : p);
    words += Math.min(n, maxWords);
  }
  if (current.length) out.push({ label, text: current.join(' ') });
  return out;
}

function debianFaqPassages() {
  return src
    .debianFaqSections(path.join(faqDir, 'debian-faq.en.txt.gz'))
    .flatMap((s) => chunk(s.paragraphs, `Debian FAQ ${s.number} "${s.title}"`));
}

// Python passages: the FAQ answers and every eval-split page of the Python documentation.
function pythonPassages() {
  const out = [];
  // FAQ pages come in through pythonFaqPassages, one passage per answer.
  for (const id of [...EVAL_IDS].filter((d) => d.startsWith('python-doc:') && !d.startsWith('python-doc:faq/')).sort()) {
    const rel = id.slice('python-doc:'.length);
    const lines = readText(path.join(pyDocs, rel)).split('\n');
    const prose = lines.filter((l) => !/^\s*(\.\. |:)/.test(l) && !/^([=\-~^*#])\1{2,}\s*$/.test(l));
    const paras = [];
    let current = [];
    for (const line of [...prose, '']) {
      if (line.trim() === '') {
        if (current.length && !/^\s/.test(current[0])) paras.push(collapse(current.join(' ')));
        current = [];
      } else current.push(line);
    }
    out.push(...chunk(paras.filter((p) => p.split(' ').length >= 8), `Python documentation, ${rel.replace('.rst.txt', '')}`));
  }
  return out;
}

function pythonFaqPassages(questions) {
  return questions.flatMap((q) =>
    chunk(
      q.answer.split(/\n\s*\n/).filter((p) => !/^\s/.test(p) && !/^\.\. /.test(p)).map(collapse),
      `Python FAQ "${q.question}"`,
    ),
  );
}

// The top three passages, or the top two where three do not fit.
async function buildRag(counter, sources, indexes) {
  const lists = [];
  for (let s = 0; s < sources.length; s++) {
    const questions = stableShuffle(
      sources[s].filter((q) => role(q) === 'rag'),
      (q) => `rag ${s} ${q.index}`,
    );
    const items = [];
    for (const q of questions) {
      for (const k of [3, 2]) {
        const passages = indexes[s].top(q.question, k);
        if (passages.length < k) continue;
        const text = passages.map((p, i) => `[${i + 1}] ${p.label}:\n${p.text}`).join('\n\n');
        const item = {
          category: 'rag',
          prompt: `Answer the question using the passages below.\n\n${text}\n\nQuestion: ${q.question}\nAnswer:`,
          max_new_tokens: 128,
          reference: truncateWords(q.answer, 600),
          passages: passages.map((p) => p.label),
          source: `${q.source}; passages: BM25 top ${k} over ${s === 0 ? 'the Debian FAQ' : 'the eval-split Python documentation pages and the Python FAQ'}`,
          license: q.license,
        };
        if ((await counter.fit(item)) !== null) {
          items.push(item);
          break;
        }
      }
    }
    lists.push(items);
  }
  return takeFitting(counter, lists, PER_CATEGORY);
}

// --- translation: Debian FAQ paragraphs, German and French to English ---------------------------

// A paragraph the translators left in English shares most of its words with the original.
function untranslated(text, english) {
  const words = new Set(english.toLowerCase().split(/\W+/));
  const own = text.toLowerCase().split(/\W+/).filter(Boolean);
  return own.filter((w) => words.has(w)).length > 0.5 * own.length;
}

async function buildTranslation(counter) {
  const en = src.debianFaqSections(path.join(faqDir, 'debian-faq.en.txt.gz'));
  const lists = [];
  for (const [code, language] of [['de', 'German'], ['fr', 'French']]) {
    const other = new Map(
      src.debianFaqSections(path.join(faqDir, `debian-faq.${code}.txt.gz`)).map((s) => [s.number, s]),
    );
    const pairs = [];
    for (const s of en) {
      const t = other.get(s.number);
      // Paragraphs align only where both sections have the same number of them.
      if (!t || t.paragraphs.length !== s.paragraphs.length) continue;
      s.paragraphs.forEach((p, k) => {
        if (p.length < 250 || p.startsWith('* ') || untranslated(t.paragraphs[k], p)) return;
        pairs.push({
          category: 'translation',
          prompt: `Translate from ${language} to English.\n\n${language}: ${t.paragraphs[k]}\n\nEnglish:`,
          max_new_tokens: 128,
          reference: p,
          source: from(`debian-faq-${code}`, `debian-faq.${code}.txt.gz section ${s.number}, paragraph ${k + 1}`) +
            `; English: ${from('debian-faq', `debian-faq.en.txt.gz section ${s.number}`)}`,
          license: LICENSES.debianFaq,
        });
      });
    }
    lists.push(stableShuffle(pairs, (p) => p.source));
  }
  return takeFitting(counter, lists, PER_CATEGORY);
}

// --- summarization: man page DESCRIPTION -> NAME line; Python module page -> :synopsis: --------

function manPageItems() {
  const items = [];
  for (const section of ['4', '5', '7']) {
    const dir = path.join(workRoot, `usr/share/man/man${section}`);
    for (const file of fs.readdirSync(dir).sort()) {
      const page = src.manPage(path.join(dir, file));
      if (!page || !page.sections.NAME || !page.sections.DESCRIPTION) continue;
      const nameLine = collapse(page.sections.NAME.join(' '));
      const dash = nameLine.indexOf(' - ');
      if (dash < 0) continue;
      const description = page.sections.DESCRIPTION.filter((p) => !p.includes('\n'));
      const text = truncateWords(description.slice(0, 4).join('\n\n'), 1400);
      if (text.length < 300) continue;
      items.push({
        category: 'summarization',
        prompt: `Summarize the manual page in one line.\n\n${page.name}(${section}), DESCRIPTION:\n${text}\n\nOne-line summary: ${nameLine.slice(0, dash)} -`,
        max_new_tokens: 64,
        reference: nameLine.slice(dash + 3),
        source: from('manpages', `man${section}/${file.replace(/\.gz$/, '')} (DESCRIPTION -> NAME)`),
        license: page.license || 'no SPDX line in the page; see the manpages package copyright file',
      });
    }
  }
  return stableShuffle(items, (i) => i.source);
}

function pythonModuleItems() {
  const items = [];
  for (const id of [...EVAL_IDS].filter((d) => d.startsWith('python-doc:library/')).sort()) {
    const rel = id.slice('python-doc:'.length);
    const page = src.pythonLibraryPage(path.join(pyDocs, rel));
    const text = truncateWords(page.paragraphs.slice(0, 4).join('\n\n'), 1400);
    if (!page.synopsis || text.length < 300) continue;
    items.push({
      category: 'summarization',
      prompt: `Summarize the module documentation in one line.\n\n${page.title}\n\n${text}\n\nOne-line summary:`,
      max_new_tokens: 64,
      reference: page.synopsis,
      source: from('python3.11-doc', `${rel} (introduction -> :synopsis:)`),
      license: LICENSES.python,
    });
  }
  return stableShuffle(items, (i) => i.source);
}

async function buildSummarization(counter) {
  return takeFitting(counter, [pythonModuleItems(), manPageItems()], PER_CATEGORY);
}

// --- math (a substitute: no word problems exist in Debian) --------------------------------------

function maximaItems() {
  const dir = path.join(workRoot, 'usr/share/maxima');
  const version = fs.readdirSync(dir).find((d) => /^\d/.test(d));
  const testDir = path.join(dir, version, 'tests');
  const items = [];
  for (const file of fs.readdirSync(testDir).filter((f) => /^rtest.*\.mac$/.test(f)).sort()) {
    const usable = src
      .maximaPairs(path.join(testDir, file))
      .filter(
        (p) =>
          p.input.length >= 8 && p.input.length <= 90 && p.expected.length <= 60 &&
          !/[:$]|kill|declare|assume|errcatch|load|block|print|error|\?/.test(p.input) &&
          p.input.includes('(') && !/error|^true$|^false$|^done$/.test(p.expected),
      );
    // Four worked examples, then the problem, in the file's own order.
    for (let i = 4; i < usable.length; i += 5) {
      const shots = usable.slice(i - 4, i).map((p) => `(%i) ${p.input};\n(%o) ${p.expected}`).join('\n\n');
      items.push({
        category: 'math',
        prompt: `Maxima computer algebra session: each input is followed by its result.\n\n${shots}\n\n(%i) ${usable[i].input};\n(%o)`,
        max_new_tokens: 64,
        reference: usable[i].expected,
        source: from('maxima-test', `tests/${file}, problem "${usable[i].input}"`),
        license: LICENSES.maxima,
      });
    }
  }
  return stableShuffle(items, (i) => i.source);
}

function quizItems() {
  const dir = path.join(workRoot, 'usr/share/games/bsdgames/quiz');
  const items = [];
  const kinds = {
    arith: (q) => `Fill in the missing number: ${q.replace('...', '?')}`,
    mult: (q) => `${q.replace(' x ', ' * ')} =`,
    'seq-easy': (q) => `Next number in the sequence ${q.split(',').join(', ')}:`,
    'seq-hard': (q) => `Next number in the sequence ${q.split(',').join(', ')}:`,
  };
  for (const [file, ask] of Object.entries(kinds)) {
    const pairs = src.quizPairs(path.join(dir, file)).filter((p) => p.answer !== '');
    const usable = file === 'mult' ? pairs.filter((p) => !/\b[01] x|x [01]$/.test(p.question)) : pairs;
    for (let i = 6; i < usable.length; i += 7) {
      const shots = usable.slice(i - 6, i).map((p) => `Q: ${ask(p.question)}\nA: ${p.answer}`).join('\n\n');
      items.push({
        category: 'math',
        prompt: `Arithmetic drill.\n\n${shots}\n\nQ: ${ask(usable[i].question)}\nA:`,
        max_new_tokens: 64,
        reference: usable[i].answer,
        source: from('bsdgames', `quiz/${file}, line "${usable[i].question}"`),
        license: LICENSES.bsdgames,
      });
    }
  }
  return stableShuffle(items, (i) => i.source);
}

async function buildMath(counter) {
  return takeFitting(counter, [maximaItems(), quizItems()], PER_CATEGORY);
}

// --- code editing: debug (Debian's CPython bug-fix patches), translate (Python <-> C module
// pairs), polish (document an undocumented function) --------------------------------------------

function debugItems() {
  const dir = path.join(pySrc, 'debian/patches');
  const items = [];
  for (const file of fs.readdirSync(dir).filter((f) => /^(CVE-|0\d+-3\.11-gh-)/.test(f)).sort()) {
    for (const h of src.patchHunks(path.join(dir, file))) {
      requireEval(`python-lib:${h.file}`);
      items.push({
        category: 'code_editing',
        task: 'debug',
        prompt: `Fix the bug in this code from Lib/${h.file}.\nBug report: ${h.subject}\n\n\`\`\`python\n${h.before}\n\`\`\`\n\nFixed code:\n\`\`\`python\n`,
        max_new_tokens: 128,
        reference: h.after,
        source: from('python3.11', `debian/patches/${file}, hunk in Lib/${h.file} (reverse-applied)`),
        license: LICENSES.python,
      });
    }
  }
  return stableShuffle(items, (i) => i.prompt);
}

const MODULE_PAIRS = [
  ['heapq.py', '_heapqmodule.c', '_heapq'],
  ['bisect.py', '_bisectmodule.c', '_bisect'],
  ['operator.py', '_operator.c', '_operator'],
  ['json/scanner.py', '_json.c', '_json'],
  ['json/decoder.py', '_json.c', '_json'],
  ['json/encoder.py', '_json.c', '_json'],
];

function translateItems() {
  const items = [];
  for (const [py, c, cmod] of MODULE_PAIRS) {
    requireEval(`python-lib:${py}`);
    const pyFuncs = src.pythonFunctions(readText(path.join(pyLib, py)));
    const cFuncs = src.cFunctions(readText(path.join(pySrc, 'Modules', c)));
    const cByName = new Map(cFuncs.map((f) => [f.name, f]));
    for (const f of pyFuncs) {
      const match = cByName.get(`${cmod}_${f.name}_impl`) || cByName.get(f.name.replace(/^_/, ''));
      items.push({
        category: 'code_editing',
        task: 'translate',
        prompt: `Translate this Python function from Lib/${py} into C for CPython's ${cmod} extension module.\n\n\`\`\`python\n${f.text}\n\`\`\`\n\nC version:\n\`\`\`c\n`,
        max_new_tokens: 128,
        ...(match ? { reference: match.text } : {}),
        source: from('libpython3.11-stdlib', `/usr/lib/python3.11/${py}, ${f.name}()`) +
          (match ? `; C: ${from('python3.11', `Modules/${c}, ${match.name}()`)}` : ''),
        license: LICENSES.python,
      });
    }
    if (py.startsWith('json/') && py !== 'json/scanner.py') continue;
    for (const f of cFuncs) {
      if (/^PyInit_|_exec$|_clear$|_traverse$|_free$|_dealloc$/.test(f.name) || f.text.split('\n').length < 8) continue;
      items.push({
        category: 'code_editing',
        task: 'translate',
        prompt: `Translate this C function from CPython's Modules/${c} into pure Python.\n\n\`\`\`c\n${f.text}\n\`\`\`\n\nPython version:\n\`\`\`python\n`,
        max_new_tokens: 128,
        source: from('python3.11', `Modules/${c}, ${f.name}()`),
        license: LICENSES.python,
      });
    }
  }
  return stableShuffle(items, (i) => i.source);
}

// Functions of eval-split modules whose docstring is removed; the task is to write it back.
function polishItems() {
  const items = [];
  const pairModules = new Set(MODULE_PAIRS.map((p) => p[0]));
  for (const id of [...EVAL_IDS].filter((d) => d.startsWith('python-lib:')).sort()) {
    const rel = id.slice('python-lib:'.length);
    if (pairModules.has(rel)) continue;
    for (const f of src.pythonFunctions(readText(path.join(pyLib, rel)))) {
      const m = /^(def [^\n]*:\n)([ \t]+)("""|''')([\s\S]*?)\3[ \t]*\n/.exec(f.text);
      const lines = f.text.split('\n').length;
      if (!m || lines < 8 || lines > 40) continue;
      const bare = f.text.slice(0, m[1].length) + f.text.slice(m[0].length);
      items.push({
        category: 'code_editing',
        task: 'polish',
        prompt: `Add a docstring to this function from Lib/${rel}, following the module's style.\n\n\`\`\`python\n${bare}\n\`\`\`\n\nWith its docstring:\n\`\`\`python\n`,
        max_new_tokens: 128,
        reference: f.text,
        source: from('libpython3.11-stdlib', `/usr/lib/python3.11/${rel}, ${f.name}() (docstring removed)`),
        license: LICENSES.python,
      });
    }
  }
  return stableShuffle(items, (i) => i.source);
}

async function buildCodeEditing(counter) {
  return takeFitting(counter, [debugItems(), translateItems(), polishItems()], 45);
}

// --- calibration prompts: windows of calibration-split documents --------------------------------

async function buildCalibration(counter) {
  const ids = splitIds('calibration');
  const docs = fs.readFileSync(path.join(build, 'calibration.txt'), 'utf8').split('\n<|endoftext|>\n');
  const license = (id) => (id.startsWith('debian-reference:') ? 'GPL-2+' : LICENSES.python);
  const pkg = (id) =>
    id.startsWith('debian-reference:') ? 'debian-reference-en' : id.startsWith('python-doc:') ? 'python3.11-doc' : 'libpython3.11-stdlib';
  const items = [];
  for (let d = 0; d < ids.length; d++) {
    const lines = docs[d].replace(/\n$/, '').split('\n');
    // Up to three windows per document, starting at 0, 1/3 and 2/3 of its lines, each cut at a
    // line boundary below 320 tokens.
    const starts = [...new Set([0, Math.floor(lines.length / 3), Math.floor((2 * lines.length) / 3)])];
    for (const start of starts) {
      let end = start;
      let text = '';
      while (end < lines.length) {
        const next = lines.slice(start, end + 1).join('\n');
        if ((await counter.count(next)) > 320) break;
        text = next;
        end++;
      }
      if (text.trim().length < 200) continue;
      items.push({
        category: 'calibration',
        prompt: text + '\n',
        max_new_tokens: 128,
        source: from(pkg(ids[d]), `${ids[d]}, lines ${start + 1}-${end}`),
        license: license(ids[d]),
      });
    }
  }
  return takeFitting(counter, [items], 1e9);
}

function numbered(prefix, items) {
  return items.map((item, i) => {
    const { category, ...rest } = item;
    return { id: `${prefix}-${String(i + 1).padStart(3, '0')}`, category, ...rest };
  });
}

async function main() {
  const counter = new TokenCounter(path.join(repo, 'data/tokenizer/tokenizer.json'));
  const questionSources = [debianFaqQuestions(), pythonFaqQuestionsAll()];
  const indexes = [
    new Bm25(debianFaqPassages()),
    new Bm25([...pythonPassages(), ...pythonFaqPassages(questionSources[1])]),
  ];

  const categories = {
    multi_turn: await buildMultiTurn(counter, questionSources),
    translation: await buildTranslation(counter),
    summarization: await buildSummarization(counter),
    qa: await buildQa(counter, questionSources),
    math: await buildMath(counter),
    rag: await buildRag(counter, questionSources, indexes),
    code_editing: await buildCodeEditing(counter),
  };
  for (const [name, items] of Object.entries(categories)) {
    if (items.length < 20) throw new Error(`${name}: only ${items.length} prompts fit`);
    writeJsonl(path.join(repo, 'data/workloads', `${name}.jsonl`), numbered(name, items));
    process.stderr.write(`build_workloads: ${name}: ${items.length}\n`);
  }
  const calibration = await buildCalibration(counter);
  if (calibration.length < 100) throw new Error(`calibration: only ${calibration.length} prompts`);
  writeJsonl(path.join(repo, 'data/calibration/prompts.jsonl'), numbered('calibration', calibration));
  process.stderr.write(`build_workloads: calibration: ${calibration.length}\n`);
}

main().catch((err) => {
  process.stderr.write(`build_workloads: ${err.stack || err}\n`);
  process.exit(1);
});
