#!/usr/bin/env node
// The summary table of scripts/serve_figures.sh from its runs (serve_load.js JSON lines, one file):
// per method and concurrency, medians over the rounds; against AR, each round's run over that
// round's AR run on the same server (a busy spell of the machine hits both): their geometric mean, its 95% percentile
// bootstrap interval over the rounds and their range.
//   node scripts/lib/serve_summary.js RUNS.jsonl
'use strict';
const rows = require("fs").readFileSync(process.argv[2], "utf8").trim().split("\n").map(JSON.parse);
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); const m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };
const groups = new Map();
for (const r of rows) { const k = r.label + "|" + r.clients; if (!groups.has(k)) groups.set(k, []); groups.get(k).push(r); }
const med = (label, clients, field) => median(groups.get(label + "|" + clients).map((r) => r[field]));
// A server's runs against its own AR (GUARD_AB: METHOD-unguarded over ar-unguarded, where it ran).
const ar_of = (label, c) => (label.endsWith("-unguarded") && groups.has("ar-unguarded|" + c) ? "ar-unguarded|" : "ar|") + c;
const vs_ar = (label, c) => groups.get(label + "|" + c).map((r, i) => r.tokens_per_s / groups.get(ar_of(label, c))[i].tokens_per_s);
// The bootstrap resamples the rounds 10,000 times with a seeded generator (mulberry32): the same
// runs always give the same interval.
const geomean = (xs) => Math.exp(xs.reduce((s, x) => s + Math.log(x), 0) / xs.length);
const bootstrap = (xs) => {
  let seed = 12345;
  const random = () => { seed = (seed + 0x6d2b79f5) | 0; let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t; return ((t ^ (t >>> 14)) >>> 0) / 4294967296; };
  const means = [];
  for (let b = 0; b < 10000; b++) means.push(geomean(xs.map(() => xs[Math.floor(random() * xs.length)])));
  means.sort((a, b) => a - b);
  return [means[Math.floor(0.025 * means.length)], means[Math.ceil(0.975 * means.length) - 1]];
};
const labels = [...new Set(rows.map((r) => r.label))];  // in the order the runs first name them
const clients = [...new Set(rows.map((r) => r.clients))];
console.log("| method | clients | tokens/s | vs AR | vs AR, 95% | vs AR, rounds | vs 1 client | p50 ms | p99 ms | tokens/step | acceptance | step ms: fixed + per row |");
console.log("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
for (const label of labels)
  for (const c of clients) {
    const tps = med(label, c, "tokens_per_s");
    const known = (field) => groups.get(label + "|" + c).map((r) => r[field]).filter((x) => x != null);
    const steps = known("tokens_per_step"), acc = known("acceptance");
    const fixed = known("step_fixed_ms"), row = known("step_row_ms");
    const line = fixed.length && row.length ? `${median(fixed).toFixed(2)} + ${median(row).toFixed(3)}` : "-";
    const ratios = vs_ar(label, c);
    const [low, high] = bootstrap(ratios);
    console.log(`| ${label} | ${c} | ${tps.toFixed(1)} | ${geomean(ratios).toFixed(2)} | ${low.toFixed(2)}-${high.toFixed(2)} | ` +
                `${Math.min(...ratios).toFixed(2)}-${Math.max(...ratios).toFixed(2)} | ` +
                `${groups.has(label + "|1") ? (tps / med(label, 1, "tokens_per_s")).toFixed(2) : "-"} | ` +  // CLIENTS without 1: none
                `${med(label, c, "p50_ms").toFixed(1)} | ${med(label, c, "p99_ms").toFixed(1)} | ${steps.length ? median(steps).toFixed(2) : "-"} | ${acc.length ? median(acc).toFixed(3) : "-"} | ${line} |`);
  }
// With GUARD_AB=1: each method against its unguarded run of the same round (--drafting-guard off).
const paired = labels.filter((l) => groups.has(l + "-unguarded|" + clients[0]));
if (paired.length) {
  console.log("\n| method | clients | guarded vs unguarded | 95% | rounds |");
  console.log("|---|---:|---:|---:|---:|");
  for (const label of paired)
    for (const c of clients) {
      const ratios = groups.get(label + "|" + c).map((r, i) => r.tokens_per_s / groups.get(label + "-unguarded|" + c)[i].tokens_per_s);
      const [low, high] = bootstrap(ratios);
      console.log(`| ${label} | ${c} | ${geomean(ratios).toFixed(2)} | ${low.toFixed(2)}-${high.toFixed(2)} | ` +
                  `${Math.min(...ratios).toFixed(2)}-${Math.max(...ratios).toFixed(2)} |`);
    }
}
