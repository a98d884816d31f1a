// specd serve driven by the official OpenAI client (npm openai), as an application would: models,
// completions and chat completions (whole and streamed), stop strings, per-request speculation and
// its metrics, lossy methods behind the opt-in, OpenAI-style errors, the API key, /metrics parsed
// by a Prometheus text parser, a cancelled stream, a full queue, a bounded load with flat memory,
// and SIGTERM finishing what is in flight. Every greedy answer must be the text `specd generate`
// prints for the same prompt.
//
// node check_server.js --specd BIN --model DIR --artifact DIR --slow-model DIR
//   --model: the pair the answers and the load run on (its draft is the demo pair's);
//   --artifact: a CSD calibration of that pair (the lossy methods); --slow-model: a target slow
//   enough that a request is still running when the next arrives (the queue and drain checks).
'use strict';
const { spawn, execFileSync } = require('child_process');
const fs = require('fs');
const OpenAI = require('openai').default;
const parsePrometheus = require('parse-prometheus-text-format');

const args = {};
for (let i = 2; i < process.argv.length; i += 2) args[process.argv[i].replace(/^--/, '')] = process.argv[i + 1];
for (const name of ['specd', 'model', 'artifact', 'slow-model'])
  if (!args[name]) { console.error(`check_server: --${name} is required`); process.exit(2); }

const KEY = 'test-key-123';
const PROMPTS = [
  'The history of the city begins',
  'Q: What does the function return when the list is empty?\nA:',
];
const checks = [];
let failed = 0;
function check(name, ok, detail) {
  checks.push(name);
  if (ok) {
    console.log(`ok   ${name}`);
  } else {
    failed++;
    console.log(`FAIL ${name}${detail !== undefined ? ': ' + detail : ''}`);
  }
}

// Starts `specd serve` on a free port; resolves once it listens.
function startServer(extra) {
  return new Promise((resolve, reject) => {
    const child = spawn(args.specd, ['serve', '--port', '0', ...extra], { stdio: ['ignore', 'ignore', 'pipe'] });
    let log = '';
    child.stderr.on('data', (d) => {
      log += d.toString();
      const m = log.match(/on http:\/\/127\.0\.0\.1:(\d+)/);
      if (m && !child.port) {
        child.port = Number(m[1]);
        child.url = `http://127.0.0.1:${child.port}`;
        resolve(child);
      }
    });
    child.log = () => log;
    child.on('exit', (code) => {
      child.exitCode_ = code;
      if (!child.port) reject(new Error(`specd serve exited with ${code} before listening:\n${log}`));
    });
  });
}

function exited(child) {
  return new Promise((resolve) => {
    if (child.exitCode_ !== undefined) return resolve(child.exitCode_);
    child.on('exit', (code, signal) => resolve(signal ? signal : code));
  });
}

function cli(...extra) {
  // generate prints the text and then a newline.
  return execFileSync(args.specd, ['generate', '--model', args.model, ...extra], { stdio: ['ignore', 'pipe', 'ignore'] })
    .toString()
    .replace(/\n$/, '');
}

async function expectError(promise, status, param) {
  try {
    await promise;
    return `no error (expected ${status})`;
  } catch (e) {
    if (e.status !== status) return `status ${e.status} (expected ${status}): ${e.message}`;
    if (param !== undefined && (!e.error || e.error.param !== param)) return `param ${e.error && e.error.param} (expected ${param})`;
    return '';
  }
}

async function metrics(url) {
  const res = await fetch(`${url}/metrics`, { headers: { Authorization: `Bearer ${KEY}` } });
  const families = parsePrometheus(await res.text());
  const value = (name, labels = {}) => {
    const family = families.find((f) => f.name === name);
    if (!family) return undefined;
    return family.metrics
      .filter((m) => Object.entries(labels).every(([k, v]) => m.labels && m.labels[k] === v))
      .reduce((sum, m) => sum + Number(m.value), 0);
  };
  return { families, value };
}

function rssKiB(pid) {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(status.match(/VmRSS:\s+(\d+)/)[1]);
}

async function main() {
  const server = await startServer(['--model', args.model, '--artifact', args.artifact, '--parallel', '4', '--queue', '16',
                                    '--max-tokens', '64', '--api-key', KEY]);
  const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: KEY, maxRetries: 0 });
  let successes = 0;
  const sdSeen = { drafts: 0, accepted: 0 };  // what the sd answers below reported
  const seeSd = (spec) => { sdSeen.drafts += spec.num_drafts; sdSeen.accepted += spec.accepted_tokens; };
  try {
    // Models and health.
    const models = await client.models.list();
    check('GET /v1/models lists the served model', models.data.length === 1 && models.data[0].id === args.model.split('/').pop(),
          JSON.stringify(models.data));
    const health = await fetch(`${server.url}/health`);
    check('GET /health answers without the key', health.status === 200);
    {
      let second = '';
      try {
        execFileSync(args.specd, ['serve', '--model', args.model, '--port', String(server.port)], { stdio: ['ignore', 'ignore', 'pipe'] });
        second = 'started';
      } catch (e) {
        second = `${e.status} ${e.stderr}`;
      }
      check('a second server on a port in use is refused in one line', /^2 specd serve: --host\/--port: cannot listen on/.test(second), second);
    }

    // Greedy completions equal the CLI's text, with every lossless method asked for.
    const expected = PROMPTS.map((p) => cli('--prompt', p, '--max-new-tokens', '24'));
    for (const method of [undefined, 'sd', 'sd-tree', 'pld', 'adapld']) {
      for (let i = 0; i < PROMPTS.length; i++) {
        const body = { model: models.data[0].id, prompt: PROMPTS[i], max_tokens: 24, temperature: 0 };
        if (method) body.speculative = { method };
        const r = await client.completions.create(body);
        successes++;
        const spec = r.speculative;
        if (method === 'sd' && spec) seeSd(spec);
        check(`completion ${method || 'default'} #${i} equals specd generate`, r.choices[0].text === expected[i],
              JSON.stringify([r.choices[0].text, expected[i]]));
        check(`completion ${method || 'default'} #${i} carries its speculative metrics`,
              spec && spec.method === (method || 'ar') && spec.lossless === true && r.usage.completion_tokens === 24 &&
                  spec.accepted_tokens <= spec.draft_tokens && spec.steps >= 1,
              JSON.stringify([spec, r.usage]));
      }
    }

    // Streaming: the deltas add up to the whole answer; the last chunk carries usage and metrics.
    {
      const stream = await client.completions.create({ prompt: PROMPTS[0], max_tokens: 24, temperature: 0, stream: true,
                                                       stream_options: { include_usage: true }, speculative: { method: 'sd' } });
      let text = '', last = null, usageChunk = null;
      for await (const chunk of stream) {
        if (chunk.choices.length) {
          text += chunk.choices[0].text;
          if (chunk.choices[0].finish_reason) last = chunk;
        } else {
          usageChunk = chunk;
        }
      }
      successes++;
      if (last && last.speculative) seeSd(last.speculative);
      check('streamed completion equals specd generate', text === expected[0], JSON.stringify([text, expected[0]]));
      check('the last streamed chunk has the finish reason, usage and metrics',
            last && last.choices[0].finish_reason === 'length' && last.speculative && last.speculative.method === 'sd' &&
                last.usage.completion_tokens === 24 && usageChunk && usageChunk.usage.total_tokens === last.usage.total_tokens,
            JSON.stringify([last, usageChunk]));
    }

    // Chat: the model's template (the plain one for the demo pair), as generate --chat renders it.
    {
      const question = 'What is a compiler?';
      const want = cli('--chat', '--system', 'Answer briefly.', '--prompt', question, '--max-new-tokens', '20');
      const messages = [{ role: 'system', content: 'Answer briefly.' }, { role: 'user', content: question }];
      const r = await client.chat.completions.create({ messages, max_tokens: 20, temperature: 0, speculative: { method: 'sd' } });
      successes++;
      if (r.speculative) seeSd(r.speculative);
      check('chat completion equals specd generate --chat', r.choices[0].message.content === want &&
            r.choices[0].message.role === 'assistant', JSON.stringify([r.choices[0].message, want]));
      const stream = await client.chat.completions.create({ messages, max_tokens: 20, temperature: 0, stream: true });
      let text = '', role = null;
      for await (const chunk of stream) {
        const delta = chunk.choices[0] && chunk.choices[0].delta;
        if (delta && delta.role) role = delta.role;
        if (delta && delta.content) text += delta.content;
      }
      successes++;
      check('streamed chat equals specd generate --chat', text === want && role === 'assistant', JSON.stringify([text, want]));
    }

    // Stop strings: the answer ends before the first one, finish reason stop.
    {
      const words = expected[0].split(' ').filter((w) => w.length > 0);
      const stop = ' ' + words[Math.min(3, words.length - 1)];
      const cut = expected[0].indexOf(stop);
      for (const stream of [false, true]) {
        const r = await client.completions.create({ prompt: PROMPTS[0], max_tokens: 24, temperature: 0, stop: [stop], stream });
        let text = '', reason = null;
        if (stream) {
          for await (const chunk of r) {
            if (!chunk.choices.length) continue;
            text += chunk.choices[0].text;
            reason = chunk.choices[0].finish_reason || reason;
          }
        } else {
          text = r.choices[0].text;
          reason = r.choices[0].finish_reason;
        }
        successes++;
        check(`stop string (${stream ? 'streamed' : 'whole'}) ends the answer before it`,
              text === expected[0].slice(0, cut) && reason === 'stop', JSON.stringify([text, stop, reason]));
      }
    }

    // Sampling with a seed repeats under AR. (A speculative method at T > 0 draws the same
    // distribution, but its cost-aware budget picks draft lengths from measured times, and the
    // draws follow the draft lengths: docs/serving.md.)
    {
      const a = await client.completions.create({ prompt: PROMPTS[1], max_tokens: 16, temperature: 1, seed: 7 });
      const b = await client.completions.create({ prompt: PROMPTS[1], max_tokens: 16, temperature: 1, seed: 7 });
      successes += 2;
      check('a seeded sampled request repeats', a.choices[0].text === b.choices[0].text, JSON.stringify([a.choices[0].text, b.choices[0].text]));
    }

    // Lossy methods: only with the opt-in, and they say they are lossy.
    check('a lossy method without allow_lossy is a 400 naming it',
          (await expectError(client.completions.create({ prompt: PROMPTS[0], max_tokens: 8, speculative: { method: 'csd' } }), 400,
                             'speculative.allow_lossy')) === '');
    {
      const r = await client.completions.create({ prompt: PROMPTS[0], max_tokens: 24, temperature: 0,
                                                  speculative: { method: 'csd', allow_lossy: true, max_draft: 3 } });
      successes++;
      const spec = r.speculative;
      check('csd with allow_lossy runs and reports itself lossy', spec.method === 'csd' && spec.lossless === false &&
            spec.acceptance_per_position.length <= 3, JSON.stringify(spec));
    }
    {
      const r = await client.completions.create({ prompt: PROMPTS[0], max_tokens: 24, temperature: 0, speculative: { method: 'sd', max_draft: 0 } });
      successes++;
      check('max_draft 0 drafts nothing and gives the same text', r.speculative.draft_tokens === 0 && r.choices[0].text === expected[0],
            JSON.stringify(r.speculative));
    }

    // Errors: one OpenAI error object naming the field.
    const bad = [
      ['an unknown method', { prompt: 'x', speculative: { method: 'nope' } }, 400, 'speculative.method'],
      ['an unknown field', { prompt: 'x', frobnicate: 1 }, 400, 'frobnicate'],
      ['logprobs', { prompt: 'x', logprobs: 2 }, 400, 'logprobs'],
      ['n = 2', { prompt: 'x', n: 2 }, 400, 'n'],
      ['max_tokens past the cap', { prompt: 'x', max_tokens: 100000 }, 400, 'max_tokens'],
      ['a temperature of the wrong type', { prompt: 'x', temperature: 'hot' }, 400, 'temperature'],
      ['an unknown model', { model: 'gpt-4', prompt: 'x' }, 404, 'model'],
    ];
    for (const [what, body, status, param] of bad) {
      const problem = await expectError(client.completions.create(body), status, param);
      check(`${what} is a ${status} naming ${param}`, problem === '', problem);
    }
    {
      const problem = await expectError(client.chat.completions.create({ messages: [{ role: 'wizard', content: 'hi' }] }), 400, 'messages[0].role');
      check('a chat message with an unknown role is a 400 naming it', problem === '', problem);
    }
    for (const [what, init, status] of [
      ['malformed JSON', { method: 'POST', body: '{"prompt": ', headers: { Authorization: `Bearer ${KEY}` } }, 400],
      ['a wrong API key', { method: 'POST', body: '{"prompt": "x"}', headers: { Authorization: 'Bearer wrong' } }, 401],
      ['no API key', { method: 'POST', body: '{"prompt": "x"}' }, 401],
      ['a body past --max-body', { method: 'POST', body: JSON.stringify({ prompt: 'x'.repeat(2 << 20) }), headers: { Authorization: `Bearer ${KEY}` } }, 413],
    ]) {
      const res = await fetch(`${server.url}/v1/completions`, init);
      let body = null;
      try { body = await res.json(); } catch (e) { /* checked below */ }
      check(`${what} is a ${status} with an error object`, res.status === status && body && body.error && typeof body.error.message === 'string',
            `${res.status} ${JSON.stringify(body)}`);
    }

    // Bounded load: 4 clients, 48 greedy requests over the prompts and methods; none lost, every
    // answer the CLI's, resident memory flat after a warm-up round.
    {
      const methods = ['ar', 'sd', 'pld', 'sd-tree'];
      const round = async (n) => {
        let next = 0, wrong = 0, lost = 0;
        const worker = async () => {
          while (next < n) {
            const k = next++;
            try {
              const r = await client.completions.create({ prompt: PROMPTS[k % PROMPTS.length], max_tokens: 24, temperature: 0,
                                                          speculative: { method: methods[k % methods.length] } });
              if (r.choices[0].text !== expected[k % PROMPTS.length]) wrong++;
              successes++;
            } catch (e) {
              lost++;
            }
          }
        };
        await Promise.all([worker(), worker(), worker(), worker()]);
        return { wrong, lost };
      };
      // Warm-up: first every thread of the server's pool (--parallel 4 + --queue 16 + 8 spare, the
      // spare ones answering 429) takes a request at once, keeping its connection, so each thread's
      // stack and malloc arena are touched before the baseline (a round alone reaches only some,
      // and later rounds went on growing by the threads they reached first); then a round.
      const poolThreads = 4 + 16 + 8;
      await Promise.all(Array.from({ length: poolThreads }, (_, k) =>
        client.completions.create({ prompt: PROMPTS[k % PROMPTS.length], max_tokens: 24, temperature: 0 })
          .then(() => { successes++; }, () => null)));
      await round(16);
      const rss0 = rssKiB(server.pid);
      let wrong = 0, lost = 0;
      for (let r = 0; r < 3; r++) {
        const out = await round(16);
        wrong += out.wrong;
        lost += out.lost;
      }
      const grew = rssKiB(server.pid) - rss0;
      check('48 concurrent requests: none lost, every answer equals specd generate', wrong === 0 && lost === 0, `${wrong} wrong, ${lost} lost`);
      check('resident memory stays flat under load (at most 4 MiB of growth)', grew <= 4096, `${grew} KiB`);
    }

    // /metrics: Prometheus' text format, counting what the requests above did.
    {
      const m = await metrics(server.url);
      const finished = m.value('specd:request_success_total');
      check('/metrics parses and counts every finished request', finished === successes, `${finished} vs ${successes}`);
      // Whether sd drafts at all is the batch planner's choice on this cache-resident target (under
      // ctest -j2 it once drafted nothing in the whole run), so the counters are held to what the sd
      // answers above reported (the load's sd requests add to them): at least that, and above 0
      // wherever an answer drafted.
      const drafts = m.value('specd:spec_decode_num_drafts_total', { method: 'sd' });
      const accepted = m.value('specd:spec_decode_num_accepted_tokens_total', { method: 'sd' });
      const atFirst = m.value('specd:spec_decode_num_accepted_tokens_per_pos_total', { method: 'sd', position: '0' });
      check('/metrics counts sd drafts and accepted tokens, at least as many as the answers reported',
            drafts >= sdSeen.drafts && accepted >= sdSeen.accepted && (sdSeen.accepted === 0 || atFirst > 0) &&
                (sdSeen.drafts === 0 || drafts > 0),
            JSON.stringify([sdSeen, drafts, accepted, atFirst]));
      const latency = m.families.find((f) => f.name === 'specd:e2e_request_latency_seconds');
      check('/metrics has the latency histogram and the queue gauges',
            latency && latency.type === 'HISTOGRAM' && Number(latency.metrics[0].count) === successes &&
                m.value('specd:num_requests_waiting') === 0 && m.value('specd:num_requests_running') === 0,
            JSON.stringify(latency && latency.metrics[0]));
      check('/metrics counts the refusals', m.value('specd:request_refused_total', { status: '400' }) >= 8);
      // After hundreds of batched steps of varied rows the planner's line is fitted: a step costs
      // something, and a row no less than nothing.
      const fixed = m.value('specd:step_cost_ms', { part: 'fixed' });
      const perRow = m.value('specd:step_cost_ms', { part: 'per_row' });
      check('/metrics has the fitted step cost', fixed >= 0 && perRow >= 0 && fixed + perRow > 0, `${fixed} + ${perRow} per row`);
      const machine = m.families.find((f) => f.name === 'specd:machine_info');
      const labels = machine && machine.metrics[0].labels;
      check('/metrics names the machine the models run on', labels && labels.device === 'cpu' && Number(labels.threads) >= 1 &&
                labels.cpu.length > 0 && m.value('specd:machine_info') === 1, JSON.stringify(labels));
    }
  } finally {
    server.kill('SIGTERM');
  }
  check('specd serve exits 0 on SIGTERM', (await exited(server)) === 0, server.log());

  // A slow target: a full queue answers 429, and SIGTERM finishes what runs and waits, then exits.
  {
    const slow = await startServer(['--model', args['slow-model'], '--parallel', '1', '--queue', '1', '--max-tokens', '256']);
    const client = new OpenAI({ baseURL: `${slow.url}/v1`, apiKey: 'none', maxRetries: 0 });
    // A client that goes away mid-stream frees its slot: the request ends as cancelled.
    {
      const controller = new AbortController();
      const stream = await client.completions.create({ prompt: PROMPTS[0], max_tokens: 256, temperature: 0, stream: true },
                                                     { signal: controller.signal });
      try {
        for await (const chunk of stream) controller.abort();
      } catch (e) { /* the abort */ }
      let cancelled = 0;
      for (let i = 0; i < 100 && !cancelled; i++) {
        await new Promise((r) => setTimeout(r, 50));
        cancelled = (await metrics(slow.url)).value('specd:request_success_total', { finished_reason: 'cancelled' }) || 0;
      }
      const m = await metrics(slow.url);
      check('an aborted stream ends as cancelled and frees its slot', cancelled === 1 && m.value('specd:num_requests_running') === 0 &&
            m.value('specd:generation_tokens_total') < 256, `${cancelled} cancelled, ${m.value('specd:generation_tokens_total')} tokens`);
    }
    // So does one that goes away while waiting for a whole answer (found from its socket).
    {
      const controller = new AbortController();
      const whole = client.completions.create({ prompt: PROMPTS[0], max_tokens: 256, temperature: 0 }, { signal: controller.signal });
      whole.catch(() => {});
      let seen = 0;
      for (let i = 0; i < 100 && !seen; i++) {
        await new Promise((r) => setTimeout(r, 20));
        seen = (await metrics(slow.url)).value('specd:num_requests_running');
      }
      check('/metrics shows a running request as running', seen === 1, `${seen}`);
      const before = (await metrics(slow.url)).value('specd:generation_tokens_total');
      controller.abort();
      let cancelled = 0;
      for (let i = 0; i < 100 && cancelled < 2; i++) {
        await new Promise((r) => setTimeout(r, 50));
        cancelled = (await metrics(slow.url)).value('specd:request_success_total', { finished_reason: 'cancelled' }) || 0;
      }
      const m = await metrics(slow.url);
      const tokens = m.value('specd:generation_tokens_total');
      check('an aborted non-streamed request ends as cancelled and frees its slot',
            cancelled === 2 && m.value('specd:num_requests_running') === 0 && tokens - before < 256,
            `${cancelled} cancelled, ${tokens - before} tokens after the abort`);
    }
    const running = await client.completions.create({ prompt: PROMPTS[0], max_tokens: 256, temperature: 0, stream: true });
    const iterator = running[Symbol.asyncIterator]();
    await iterator.next();  // the first chunk: it holds the slot now
    const waiting = client.completions.create({ prompt: PROMPTS[1], max_tokens: 8, temperature: 0 });
    await new Promise((r) => setTimeout(r, 50));
    const problem = await expectError(client.completions.create({ prompt: PROMPTS[1], max_tokens: 8 }), 429);
    check('a full queue answers 429', problem === '', problem);
    slow.kill('SIGTERM');
    let text = '', reason = null;
    for (let step = await iterator.next(); !step.done; step = await iterator.next()) {
      const choice = step.value.choices[0];
      if (choice) {
        text += choice.text;
        reason = choice.finish_reason || reason;
      }
    }
    const queued = await waiting;
    check('SIGTERM lets the running and the queued request finish', reason !== null && queued.choices[0].text.length >= 0 &&
          queued.usage.completion_tokens >= 1, JSON.stringify([reason, queued.usage]));
    check('specd serve exits 0 after draining', (await exited(slow)) === 0, slow.log());
  }

  console.log(`${checks.length - failed} of ${checks.length} checks passed`);
  process.exit(failed ? 1 : 0);
}

main().catch((e) => {
  console.error(`check_server: ${e.stack || e}`);
  process.exit(1);
});
