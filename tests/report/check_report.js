#!/usr/bin/env node
// Opens a report.html from disk in Debian's headless Chromium (puppeteer-core over CDP; it
// downloads no browser) and checks it as a reader would get it:
//   - no console error or warning (Vega and Vega-Lite warn about bad specs), no page error;
//   - no request but the file itself (every other request is recorded and aborted);
//   - every section id present, every chart drawn (an SVG with marks, a title and axis titles),
//     at least --min-charts charts;
//   - --not-calibrated ID: that section says "not calibrated";
//   - --charts-in ID: that section draws at least one chart;
//   - report.md beside it has the same tables as the page, in the same order, cell for cell;
//   - a full-page screenshot to --screenshot.
// usage: node check_report.js --dir REPORT_DIR --screenshot PNG [--min-charts N] [--not-calibrated ID ...] [--charts-in ID ...]
// Exits non-zero with one line per failure. Chromium and node_modules are installed by
// scripts/setup.sh; their absence is a failure here, not a skip.
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const { pathToFileURL } = require('url');

const SECTIONS = ['verdict', 'provenance', 'arc-coverage', 'csd-memory', 'sweeps', 'deployment', 'drift', 'what-if'];
const CHROMIUM = process.env.SPECD_CHROMIUM || '/usr/bin/chromium-headless-shell';

function parseArgs(argv) {
  const args = { minCharts: 0, notCalibrated: [], chartsIn: [] };
  for (let i = 0; i < argv.length; i++) {
    const value = () => {
      if (i + 1 >= argv.length) throw new Error(`${argv[i]} needs a value`);
      return argv[++i];
    };
    switch (argv[i]) {
      case '--dir': args.dir = value(); break;
      case '--screenshot': args.screenshot = value(); break;
      case '--min-charts': args.minCharts = Number(value()); break;
      case '--not-calibrated': args.notCalibrated.push(value()); break;
      case '--charts-in': args.chartsIn.push(value()); break;
      default: throw new Error(`unknown argument ${argv[i]}`);
    }
  }
  if (!args.dir || !args.screenshot) throw new Error('usage: check_report.js --dir DIR --screenshot PNG [--min-charts N] [--not-calibrated ID ...]');
  return args;
}

// A pipe-table row: cells split at unescaped '|', trimmed, backslash escapes undone.
function mdCells(line) {
  const cells = [];
  let cell = null;
  for (let i = 0; i < line.length; i++) {
    if (line[i] === '\\' && i + 1 < line.length) {
      cell += line[++i];
    } else if (line[i] === '|') {
      if (cell !== null) cells.push(cell.trim());
      cell = '';
    } else {
      cell += line[i];
    }
  }
  return cells;
}

// Every pipe table of report.md in order, with the bold caption line above it when there is one.
function markdownTables(text) {
  const lines = text.split('\n');
  const tables = [];
  for (let i = 0; i < lines.length; i++) {
    if (!lines[i].startsWith('|') || (i > 0 && lines[i - 1].startsWith('|'))) continue;
    const above = i >= 2 && lines[i - 1] === '' ? lines[i - 2] : '';
    const caption = above.length > 4 && above.startsWith('**') && above.endsWith('**') ? mdCells(`|${above.slice(2, -2)}|`)[0] : '';
    const rows = [];
    for (let j = i; j < lines.length && lines[j].startsWith('|'); j++)
      if (j !== i + 1) rows.push(mdCells(lines[j]));  // j == i + 1: the alignment row
    tables.push({ caption, rows });
  }
  return tables;
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const failures = [];
  const fail = (message) => failures.push(message);
  const htmlPath = path.resolve(args.dir, 'report.html');
  const mdPath = path.resolve(args.dir, 'report.md');
  for (const p of [htmlPath, mdPath]) if (!fs.existsSync(p)) throw new Error(`${p} is missing`);
  if (!fs.existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: run scripts/setup.sh (Debian's chromium-headless-shell)`);
  let puppeteer;
  try {
    puppeteer = require('puppeteer-core');
  } catch (e) {
    throw new Error(`puppeteer-core is missing from ${__dirname}/node_modules: run scripts/setup.sh`);
  }

  const pageUrl = pathToFileURL(htmlPath).href;
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'specd-report-chromium-'));
  // Root in CI: no sandbox. The rest keeps Chromium from calling home on a closed network.
  const browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: 'shell',
    userDataDir: profile,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
           '--disable-sync', '--disable-quic', '--no-first-run', '--disable-default-apps'],
  });
  try {
    const page = await browser.newPage();
    await page.setViewport({ width: 1280, height: 900 });
    page.on('console', (m) => {
      if (m.type() === 'error' || m.type() === 'warn' || m.type() === 'warning') fail(`console ${m.type()}: ${m.text()}`);
    });
    page.on('pageerror', (e) => fail(`page error: ${e.message}`));
    await page.setRequestInterception(true);
    page.on('request', (request) => {
      if (request.url() === pageUrl) return request.continue();
      fail(`request other than the page: ${request.url()}`);
      return request.abort();
    });
    await page.goto(pageUrl, { waitUntil: 'load' });
    await page.evaluate(() => window.specdCharts);

    const found = await page.evaluate((ids, notCalibrated) => {
      const text = (el) => (el ? el.textContent : '');
      return {
        sections: ids.filter((id) => document.querySelector(`section#${id} > h2`)),
        notCalibrated: notCalibrated.filter((id) => text(document.querySelector(`section#${id}`)).includes('not calibrated')),
        charts: Array.from(document.querySelectorAll('figure.chart')).map((figure) => {
          const svg = figure.querySelector('.vega svg');
          const texts = (selector) => (svg ? Array.from(svg.querySelectorAll(selector)).map((t) => t.textContent.trim()).filter((t) => t) : []);
          return {
            id: figure.id,
            section: figure.closest('section') ? figure.closest('section').id : '',
            label: figure.querySelector('.vega').dataset.title,
            svg: Boolean(svg),
            marks: svg ? Array.from(svg.querySelectorAll('g.role-mark')).reduce((n, g) => n + g.childElementCount, 0) : 0,
            titles: texts('g.role-title-text text'),
            axisTitles: texts('g.role-axis-title text'),
            error: text(figure.querySelector('.chart-error')),
          };
        }),
        tables: Array.from(document.querySelectorAll('table')).map((table) => ({
          caption: text(table.querySelector('caption')),
          rows: Array.from(table.querySelectorAll('tr')).map((tr) => Array.from(tr.querySelectorAll('th, td')).map((c) => c.textContent)),
        })),
      };
    }, SECTIONS, args.notCalibrated);

    for (const id of SECTIONS) if (!found.sections.includes(id)) fail(`section #${id} is missing`);
    for (const id of args.notCalibrated) if (!found.notCalibrated.includes(id)) fail(`section #${id} does not say "not calibrated"`);
    for (const id of args.chartsIn) if (!found.charts.some((c) => c.section === id)) fail(`section #${id} draws no chart`);
    if (found.charts.length < args.minCharts) fail(`${found.charts.length} charts, expected at least ${args.minCharts}`);
    for (const c of found.charts) {
      const name = `${c.id} "${c.label}"`;
      if (c.error) fail(`${name}: ${c.error}`);
      else if (!c.svg) fail(`${name}: no SVG drawn`);
      else if (c.marks === 0) fail(`${name}: SVG without marks`);
      if (c.svg && c.titles.length === 0) fail(`${name}: no title`);
      if (c.svg && c.axisTitles.length === 0) fail(`${name}: no axis titles`);
    }

    const md = markdownTables(fs.readFileSync(mdPath, 'utf8'));
    if (md.length !== found.tables.length) fail(`report.md has ${md.length} tables, report.html ${found.tables.length}`);
    for (let t = 0; t < Math.min(md.length, found.tables.length); t++) {
      const h = found.tables[t], m = md[t];
      if (h.caption !== m.caption) fail(`table ${t + 1}: caption "${h.caption}" in HTML, "${m.caption}" in Markdown`);
      if (h.rows.length !== m.rows.length) fail(`table ${t + 1} "${h.caption}": ${h.rows.length} rows in HTML, ${m.rows.length} in Markdown`);
      for (let r = 0; r < Math.min(h.rows.length, m.rows.length); r++)
        if (JSON.stringify(h.rows[r]) !== JSON.stringify(m.rows[r]))
          fail(`table ${t + 1} "${h.caption}" row ${r}: HTML ${JSON.stringify(h.rows[r])}, Markdown ${JSON.stringify(m.rows[r])}`);
    }

    await page.screenshot({ path: args.screenshot, fullPage: true });
    console.log(`${htmlPath}: ${found.sections.length} sections, ${found.charts.length} charts, ${found.tables.length} tables; screenshot ${args.screenshot}`);
  } finally {
    await browser.close();
    fs.rmSync(profile, { recursive: true, force: true });
  }
  if (failures.length) {
    for (const f of failures) console.error(`FAIL ${f}`);
    process.exit(1);
  }
}

main().catch((e) => {
  console.error(`FAIL ${e.message}`);
  process.exit(1);
});
