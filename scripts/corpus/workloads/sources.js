'use strict';
// Readers for the held-out sources the workloads are cut from. Each returns plain records; the
// builders decide what becomes a prompt.
const fs = require('fs');
const path = require('path');
const { collapse, paragraphs, readText } = require('./common');

// Debian FAQ plain text (any language): numbered sections "5.3. Title" at column 0, the title
// possibly wrapped over several lines, the body indented below it.
function debianFaqSections(file) {
  const lines = readText(file).split('\n');
  const sections = [];
  for (let i = 0; i < lines.length; i++) {
    const m = /^(\d+)\.(\d+)\.\s+(\S.*)$/.exec(lines[i]);
    if (!m) continue;
    const title = [m[3]];
    let j = i + 1;
    while (j < lines.length && lines[j].trim() !== '') title.push(lines[j++].trim());
    const body = [];
    while (j < lines.length && !/^\S/.test(lines[j])) body.push(lines[j++]);
    sections.push({
      number: `${m[1]}.${m[2]}`,
      chapter: Number(m[1]),
      title: collapse(title.join(' ')),
      paragraphs: paragraphs(body),
    });
    i = j - 1;
  }
  return sections;
}

// reStructuredText headings: a text line underlined (and maybe overlined) with one punctuation
// character. Returns [{title, char, start, end}] with body line ranges.
function rstHeadings(lines) {
  const headings = [];
  for (let i = 1; i < lines.length; i++) {
    const under = lines[i];
    const text = lines[i - 1];
    if (!/^([=\-~^*#+"'`])\1{2,}\s*$/.test(under) || text.trim() === '' || /^\s/.test(text)) continue;
    if (/^([=\-~^*#+"'`])\1{2,}\s*$/.test(text)) continue;
    if (under.trimEnd().length < text.trimEnd().length) continue;
    headings.push({ title: text.trim(), char: under[0], line: i - 1, start: i + 1 });
  }
  headings.forEach((h, k) => {
    const next = headings[k + 1];
    // An overline belongs to the next heading, not to this body.
    h.end = next ? (next.line > 0 && lines[next.line - 1] === lines[next.line + 1] ? next.line - 1 : next.line) : lines.length;
  });
  return headings;
}

// Questions of a Python FAQ page: headings that end in "?", with their answers (raw reST) and
// the page title.
function pythonFaqQuestions(file) {
  const lines = readText(file).split('\n');
  const headings = rstHeadings(lines);
  const page = headings.length ? headings[0].title : '';
  const out = [];
  for (const h of headings) {
    if (!h.title.endsWith('?')) continue;
    const answer = lines.slice(h.start, h.end).join('\n').trim();
    if (answer !== '') out.push({ page, question: h.title, answer });
  }
  return out;
}

// A Python library page: its title, the module's :synopsis:, and the prose paragraphs of its
// introduction (directives, code blocks and headings left out).
function pythonLibraryPage(file) {
  const text = readText(file);
  const synopsis = /^\s*:synopsis:\s*(.+(?:\n {6,}\S.*)*)/m.exec(text);
  const lines = text.split('\n');
  const headings = rstHeadings(lines);
  const intro = [];
  let inDirective = false;
  const start = headings.length ? headings[0].start : 0;
  const end = headings.length > 1 ? headings[1].line : lines.length;
  for (const line of lines.slice(start, end)) {
    if (/^\.\. /.test(line) || /::\s*$/.test(line)) {
      inDirective = true;
      continue;
    }
    if (inDirective && (line.trim() === '' || /^\s/.test(line))) continue;
    inDirective = false;
    if (/^\*\*Source code:\*\*/.test(line) || /^-{4,}$/.test(line.trim())) continue;
    intro.push(line);
  }
  return {
    title: headings.length ? headings[0].title.replace(/:[a-z:]+:`([^`]*)`/g, '$1') : path.basename(file),
    synopsis: synopsis ? collapse(synopsis[1]) : null,
    paragraphs: paragraphs(intro).filter((p) => p !== '' && !p.startsWith('>>>') && !p.endsWith(':')),
  };
}

// --- man pages (roff) -------------------------------------------------------------------------

const ROFF_GLYPHS = {
  aq: "'", dq: '"', em: '--', en: '-', lq: '"', rq: '"', oq: "'", cq: "'", bu: '*', co: '(C)',
  mu: 'x', rs: '\\', ti: '~', ha: '^', hy: '-', ga: '`', sl: '/', at: '@', lB: '[', rB: ']',
  lC: '{', rC: '}', la: '<', ra: '>', 'd-': '-', pl: '+', eq: '=', '>=': '>=', '<=': '<=',
  '->': '->', '<-': '<-', '!=': '!=', de: ' degrees', '+-': '+/-', tm: '(TM)', rg: '(R)',
};

function roffInline(text) {
  return text
    .replace(/\\f(\[[^\]]*\]|\(..|.)/g, '')
    .replace(/\\\(([^\s]{2})/g, (_, g) => ROFF_GLYPHS[g] ?? '')
    .replace(/\\\[([^\]]*)\]/g, (_, g) => ROFF_GLYPHS[g] ?? '')
    .replace(/\\\*(\(..|\[[^\]]*\]|.)/g, '')
    .replace(/\\[&|^c%]/g, '')
    .replace(/\\[ ~0]/g, ' ')
    .replace(/\\-/g, '-')
    .replace(/\\e/g, '\\')
    .replace(/\\(.)/g, '$1');
}

function roffArgs(rest) {
  const args = [];
  const re = /"((?:[^"]|"")*)"|(\S+)/g;
  let m;
  while ((m = re.exec(rest))) args.push(m[1] !== undefined ? m[1].replace(/""/g, '"') : m[2]);
  return args;
}

// Renders one man page's roff source to sections of plain paragraphs (fill mode joins lines,
// no-fill blocks keep them). Returns null for a page that only sources another (.so).
function manPage(file) {
  const source = readText(file);
  if (/^\.so /m.test(source)) return null;
  const license = (/SPDX-License-Identifier:\s*(.+)$/m.exec(source) || [])[1] || null;
  const sections = {};
  let name = null;
  let current = null;
  let para = [];
  let fill = true;
  const flush = () => {
    if (current && para.length) sections[current].push(fill ? collapse(para.join(' ')) : para.join('\n'));
    para = [];
  };
  for (const raw of source.split('\n')) {
    if (/^['.]\\"/.test(raw) || raw === '.') continue;
    const macro = /^[.'](\S+)\s*(.*)$/.exec(raw);
    if (!macro) {
      if (current) para.push(roffInline(raw));
      continue;
    }
    const [, op, rest] = macro;
    const args = roffArgs(rest).map(roffInline);
    if (op === 'TH') name = args[0];
    if (op === 'SH') {
      flush();
      current = args.join(' ').toUpperCase();
      sections[current] = sections[current] || [];
      fill = true;
    } else if (['B', 'I', 'SM', 'SB'].includes(op)) {
      if (current) para.push(args.join(' '));
    } else if (/^[BIR]{2}$/.test(op)) {
      if (current) para.push(args.join(''));
    } else if (['nf', 'EX'].includes(op)) {
      flush();
      fill = false;
    } else if (['fi', 'EE'].includes(op)) {
      flush();
      fill = true;
    } else if (['PP', 'P', 'LP', 'TP', 'TQ', 'IP', 'RS', 'RE', 'sp', 'br', 'SS', 'in'].includes(op)) {
      flush();
      if ((op === 'IP' || op === 'SS') && args[0]) para.push(args[0]);
    }
  }
  flush();
  return { name, license, sections };
}

// --- math substitutes -------------------------------------------------------------------------

// Maxima test files: statements ending in ";" or "$" (comments and strings respected), read as
// (input, expected result) pairs in order.
function maximaPairs(file) {
  const text = readText(file);
  const statements = [];
  let current = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      i = end < 0 ? text.length : end + 1;
      continue;
    }
    if (c === '"') {
      const end = text.indexOf('"', i + 1);
      current += text.slice(i, end < 0 ? text.length : end + 1);
      i = end < 0 ? text.length : end;
      continue;
    }
    if (c === ';' || c === '$') {
      statements.push(collapse(current));
      current = '';
      continue;
    }
    current += c;
  }
  const pairs = [];
  for (let i = 0; i + 1 < statements.length; i += 2) {
    pairs.push({ input: statements[i], expected: statements[i + 1] });
  }
  return pairs;
}

// bsdgames quiz files: "question:answer[:more answers]"; "{...}" marks optional text and
// "[a|b]" alternatives, of which the first is kept.
function quizPairs(file) {
  const clean = (s) =>
    s.replace(/\{[^}]*\}/g, '').replace(/\[([^|\]]*)(\|[^\]]*)?\]/g, '$1').replace(/\|.*$/, '').trim();
  return readText(file)
    .split('\n')
    .filter((line) => line.includes(':'))
    .map((line) => {
      const [q, a] = line.split(':');
      return { question: clean(q), answer: clean(a) };
    });
}

// --- code -------------------------------------------------------------------------------------

// Hunks of a patch that touch Lib/**.py (tests left out), with the code before and after.
function patchHunks(file) {
  const text = fs.readFileSync(file, 'utf8');
  const subjectMatch = /^Subject:\s*(?:\[PATCH[^\]]*\]\s*)?((?:.+)(?:\n[ \t].+)*)/m.exec(text);
  const descriptionMatch = /^Description:\s*(.+)$/m.exec(text);
  const subject = collapse(
    subjectMatch ? subjectMatch[1] : descriptionMatch ? descriptionMatch[1] : path.basename(file),
  ).replace(/^\[3\.\d+\]\s*/, '');
  const hunks = [];
  let target = null;
  let hunk = null;
  for (const line of text.split('\n')) {
    const plus = /^\+\+\+ (\S+)/.exec(line);
    if (plus) {
      const m = /(?:^|\/)Lib\/(.+\.py)$/.exec(plus[1]);
      target = m && !m[1].startsWith('test/') ? m[1] : null;
      hunk = null;
      continue;
    }
    if (line.startsWith('diff ') || line.startsWith('--- ')) {
      hunk = null;
      continue;
    }
    if (line.startsWith('@@')) {
      hunk = target ? { file: target, before: [], after: [], changed: false } : null;
      if (hunk) hunks.push(hunk);
      continue;
    }
    if (!hunk) continue;
    const body = line.slice(1);
    if (line.startsWith(' ') || line === '') {
      hunk.before.push(body);
      hunk.after.push(body);
    } else if (line.startsWith('-')) {
      hunk.before.push(body);
      hunk.changed = true;
    } else if (line.startsWith('+')) {
      hunk.after.push(body);
      hunk.changed = true;
    } else if (!line.startsWith('\\')) {
      hunk = null;
    }
  }
  const trim = (lines) => lines.join('\n').replace(/^\n+|\s+$/g, '');
  return hunks
    .filter((h) => h.changed)
    .map((h) => ({ patch: path.basename(file), subject, file: h.file, before: trim(h.before), after: trim(h.after) }));
}

// Top-level "def" functions of a Python module, comments above them left out.
function pythonFunctions(text) {
  const lines = text.split('\n');
  const out = [];
  for (let i = 0; i < lines.length; i++) {
    const m = /^def (\w+)\(/.exec(lines[i]);
    if (!m) continue;
    let j = i + 1;
    while (j < lines.length && (lines[j].trim() === '' || /^\s/.test(lines[j]) || /^\)/.test(lines[j]))) j++;
    out.push({ name: m[1], text: lines.slice(i, j).join('\n').trimEnd() });
    i = j - 1;
  }
  return out;
}

// C function definitions written CPython style: return type on its own line, name at column 0,
// braces at column 0.
function cFunctions(text) {
  const lines = text.split('\n');
  const out = [];
  for (let i = 1; i < lines.length; i++) {
    const m = /^(\w+)\(/.exec(lines[i]);
    if (!m || !/^(static\s+)?[A-Za-z_][\w\s*]*$/.test(lines[i - 1])) continue;
    let open = i;
    while (open < lines.length && lines[open] !== '{') {
      if (/;\s*$/.test(lines[open])) break;
      open++;
    }
    if (lines[open] !== '{') continue;
    let close = open + 1;
    while (close < lines.length && lines[close] !== '}') close++;
    out.push({ name: m[1], text: lines.slice(i - 1, close + 1).join('\n') });
    i = close;
  }
  return out;
}

module.exports = {
  cFunctions,
  debianFaqSections,
  manPage,
  maximaPairs,
  patchHunks,
  pythonFaqQuestions,
  pythonFunctions,
  pythonLibraryPage,
  quizPairs,
};
