#!/usr/bin/env node
// Load generator for specd serve (or any OpenAI-compatible server): at each concurrency, that many
// clients send completion requests back to back (a closed loop), each a workload prompt with the
// method asked for in "speculative"; prints aggregate generated tokens/s, requests/s and p50/p99
// latency per concurrency, as a table and as one JSON line each, with specd serve's fitted step
// cost (ms fixed + ms per verified row) after each. No dependencies (Node's fetch).
// --stream asks for server-sent events and adds what a reader of the stream sees: time to the
// first text (p50, p99) and the gaps between text arrivals (p99, largest), where a newcomer's
// prefill sharing the step shows as a stall.
//
//   scripts/serve_load.js --url http://127.0.0.1:8080 --prompts data/workloads/qa.jsonl
//       [--clients 1,2,4,8] [--requests 16] [--max-tokens 64] [--method sd] [--allow-lossy]
//       [--max-draft K] [--temperature 0] [--stream] [--label NAME]
//
// --requests is per client. Every request must succeed (exit 1 otherwise, naming the first
// failure); a greedy run of a lossless method also checks that every answer to a prompt is the
// same text.
'use strict';
const fs = require('fs');

function usage(message) {
  console.error(`serve_load: ${message}`);
  process.exit(2);
}

const opts = { clients: '1,2,4,8', requests: '16', 'max-tokens': '64', temperature: '0' };
for (let i = 2; i < process.argv.length; i++) {
  const name = process.argv[i].replace(/^--/, '');
  if (name === 'allow-lossy' || name === 'stream') opts[name] = true;
  else if (i + 1 < process.argv.length) opts[name] = process.argv[++i];
  else usage(`--${name} needs a value`);
}
if (!opts.url) usage('--url is required');
if (!opts.prompts) usage('--prompts is required (a workload .jsonl file)');
const clientCounts = opts.clients.split(',').map(Number);
const perClient = Number(opts.requests);
const maxTokens = Number(opts['max-tokens']);
const temperature = Number(opts.temperature);
if (clientCounts.some((c) => !(c >= 1)) || !(perClient >= 1) || !(maxTokens >= 1)) usage('--clients, --requests and --max-tokens must be positive');

let prompts;
try {
  prompts = fs.readFileSync(opts.prompts, 'utf8').split('\n').filter((l) => l.trim()).map((l) => {
    const item = JSON.parse(l);
    return item.turns ? item.turns[0] : item.prompt;
  });
} catch (e) {
  usage(`${opts.prompts}: ${e.message}`);
}
if (!prompts.length) usage(`${opts.prompts}: holds no prompts`);

// The API key, when the server wants one.
function authHeaders() {
  return process.env.SPECD_API_KEY ? { Authorization: `Bearer ${process.env.SPECD_API_KEY}` } : {};
}

async function complete(prompt) {
  const body = { prompt, max_tokens: maxTokens, temperature };
  if (opts.method) body.speculative = { method: opts.method, allow_lossy: !!opts['allow-lossy'] };
  if (opts['max-draft'] !== undefined) body.speculative = { ...body.speculative, max_draft: Number(opts['max-draft']) };
  if (opts.stream) body.stream = true;
  const headers = { 'Content-Type': 'application/json', ...authHeaders() };
  const start = performance.now();
  const res = await fetch(`${opts.url}/v1/completions`, { method: 'POST', headers, body: JSON.stringify(body) });
  if (res.status !== 200) {
    const json = await res.json().catch(() => ({}));
    throw new Error(`HTTP ${res.status}: ${json.error ? json.error.message : JSON.stringify(json)}`);
  }
  if (!opts.stream) {
    const json = await res.json();
    return { ms: performance.now() - start, tokens: json.usage.completion_tokens, text: json.choices[0].text, spec: json.speculative };
  }
  // Server-sent events: "data: {chunk}" blocks; the last chunk carries usage and the metrics.
  const out = { text: '', ttft: null, gaps: [], tokens: 0, spec: null };
  const decoder = new TextDecoder();
  let buffer = '', last = null;
  for await (const bytes of res.body) {
    buffer += decoder.decode(bytes, { stream: true });
    for (let end; (end = buffer.indexOf('\n\n')) >= 0; buffer = buffer.slice(end + 2)) {
      const data = buffer.slice(0, end).replace(/^data: /, '');
      if (data === '[DONE]') continue;
      const chunk = JSON.parse(data);
      const piece = chunk.choices.length ? chunk.choices[0].text : '';
      if (piece) {
        const now = performance.now();
        if (last === null) out.ttft = now - start;
        else out.gaps.push(now - last);
        last = now;
        out.text += piece;
      }
      if (chunk.usage) out.tokens = chunk.usage.completion_tokens;
      if (chunk.speculative) out.spec = chunk.speculative;
    }
  }
  out.ms = performance.now() - start;
  return out;
}

// specd serve's fitted step cost after a run (its /metrics, specd:step_cost_ms): what its draft
// budgets priced a row at, which says how dear verifying drafts was on this machine. Nulls from a
// server without it.
async function stepCost() {
  const cost = { step_fixed_ms: null, step_row_ms: null };
  try {
    const res = await fetch(`${opts.url}/metrics`, { headers: authHeaders() });
    if (res.status !== 200) return cost;
    const text = await res.text();
    const part = (name) => {
      const m = text.match(new RegExp(`^specd:step_cost_ms\\{part="${name}"\\} (\\S+)$`, 'm'));
      return m ? Number(Number(m[1]).toFixed(3)) : null;
    };
    cost.step_fixed_ms = part('fixed');
    cost.step_row_ms = part('per_row');
  } catch (e) {
    // not specd serve: no figures
  }
  return cost;
}

function percentile(sorted, q) {
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[i];
}

async function run(clients) {
  const latencies = [], ttfts = [], gaps = [];
  let tokens = 0, accepted = 0, drafted = 0, steps = 0;
  const texts = new Map();
  const start = performance.now();
  await Promise.all(Array.from({ length: clients }, async (_, c) => {
    for (let r = 0; r < perClient; r++) {
      const k = (c * perClient + r) % prompts.length;
      const out = await complete(prompts[k]);
      latencies.push(out.ms);
      if (out.ttft != null) ttfts.push(out.ttft);  // streamed, with text
      if (out.gaps) gaps.push(...out.gaps);
      tokens += out.tokens;
      if (out.spec) {
        accepted += out.spec.accepted_tokens;
        drafted += out.spec.draft_tokens;
        steps += out.spec.steps;
      }
      // A lossy method's answers may differ (CSD's correction memory learns as it serves).
      if (temperature === 0 && !(out.spec && out.spec.lossless === false)) {
        if (texts.has(k) && texts.get(k) !== out.text) throw new Error(`prompt ${k}: two greedy answers differ`);
        texts.set(k, out.text);
      }
    }
  }));
  const seconds = (performance.now() - start) / 1000;
  for (const xs of [latencies, ttfts, gaps]) xs.sort((a, b) => a - b);
  const ms = (xs, q) => (xs.length ? Number(percentile(xs, q).toFixed(1)) : null);
  return {
    label: opts.label || opts.method || 'default',
    clients,
    requests: latencies.length,
    tokens,
    seconds: Number(seconds.toFixed(3)),
    tokens_per_s: Number((tokens / seconds).toFixed(1)),
    requests_per_s: Number((latencies.length / seconds).toFixed(2)),
    p50_ms: Number(percentile(latencies, 0.5).toFixed(1)),
    p99_ms: Number(percentile(latencies, 0.99).toFixed(1)),
    ...(opts.stream ? { ttft_p50_ms: ms(ttfts, 0.5), ttft_p99_ms: ms(ttfts, 0.99), gap_p99_ms: ms(gaps, 0.99), gap_max_ms: ms(gaps, 1) } : {}),
    tokens_per_step: steps ? Number(((steps + accepted) / steps).toFixed(2)) : null,
    acceptance: drafted ? Number((accepted / drafted).toFixed(3)) : null,
    ...(await stepCost()),
  };
}

(async () => {
  const rows = [];
  for (const c of clientCounts) rows.push(await run(c));
  const streamed = opts.stream ? ' first text p50 / p99 ms | gap p99 / max ms |' : '';
  console.log(`| method | clients | requests | tokens/s | requests/s | p50 ms | p99 ms | tokens/step | acceptance |${streamed}`);
  console.log(`|---|---:|---:|---:|---:|---:|---:|---:|---:|${opts.stream ? '---:|---:|' : ''}`);
  for (const r of rows)
    console.log(`| ${r.label} | ${r.clients} | ${r.requests} | ${r.tokens_per_s} | ${r.requests_per_s} | ${r.p50_ms} | ${r.p99_ms} | ` +
                `${r.tokens_per_step ?? '-'} | ${r.acceptance ?? '-'} |` +
                (opts.stream ? ` ${r.ttft_p50_ms} / ${r.ttft_p99_ms} | ${r.gap_p99_ms} / ${r.gap_max_ms} |` : ''));
  for (const r of rows) console.log(JSON.stringify(r));
})().catch((e) => {
  console.error(`serve_load: ${e.message}`);
  process.exit(1);
});
