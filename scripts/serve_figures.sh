#!/usr/bin/env bash
# specd serve under load (docs/serving.md): one server of the large demo pair with its artifact,
# and scripts/serve_load.js at 1, 2, 4 and 8 concurrent clients for AR, sd (the lossless method
# with a draft model), sam (the fastest lossless method on this pair: its corpus, and the draft
# model's tree when retrieval finds nothing) and CSD (calibrated, lossy), each method asked for per
# request. Greedy, 64 new tokens, the qa workload's prompts, ROUNDS rounds in which the methods
# take turns (a busy spell of the shared machine hits them alike); the summary gives each figure's
# median over the rounds, against AR the median and range of each round's ratio to that round's
# AR run, and the server's fitted step cost (ms fixed + ms per verified row, its /metrics) after
# each run: how dear verifying a draft was on this machine. Run on a quiet machine.
# Raw output: reports/bench/serve-load.txt. Needs a built specd (scripts/build.sh) and the large
# pair's artifact (scripts/demo.sh makes artifacts/demo-large-pair).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/machine_stamp.sh
source scripts/lib/serve_wait.sh
specd=${SPECD:-build/cli/specd}
out=${OUT:-reports/bench/serve-load.txt}
artifact=${ARTIFACT:-artifacts/demo-large-pair}
requests=${REQUESTS:-8}
rounds=${ROUNDS:-10}
clients=${CLIENTS:-1,2,4,8}
port=${PORT:-8391}
log=$(mktemp)
raw=$(mktemp)
"$specd" serve --artifact "$artifact" --port "$port" --parallel 8 --queue 8 --max-tokens 64 2> "$log" &
server=$!
trap 'kill -TERM $server 2>/dev/null; wait $server 2>/dev/null; rm -f "$log" "$raw"' EXIT
wait_for_server "$log" $server
url=http://127.0.0.1:$port
for round in $(seq 1 "$rounds"); do
  echo "serve_figures: round $round of $rounds" >&2
  for method in ar sd sam csd; do
    lossy=(); [ "$method" = csd ] && lossy=(--allow-lossy)
    node scripts/serve_load.js --url "$url" --prompts data/workloads/qa.jsonl --clients "$clients" --requests "$requests" \
      --max-tokens 64 --method "$method" "${lossy[@]}" | grep '^{' >> "$raw"
  done
done
{
  machine_stamp
  grep "on http://" "$log"
  echo "# $rounds rounds, $requests requests per client per round, 64 new tokens, greedy; medians over the rounds"
  node -e '
    const rows = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n").map(JSON.parse);
    const median = (xs) => { const s = [...xs].sort((a, b) => a - b); const m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };
    const groups = new Map();
    for (const r of rows) { const k = r.label + "|" + r.clients; if (!groups.has(k)) groups.set(k, []); groups.get(k).push(r); }
    const med = (label, clients, field) => median(groups.get(label + "|" + clients).map((r) => r[field]));
    // Against AR run by run: each run of a round over the AR run of the same round (a busy spell
    // of the machine hits both), their median and their range over the rounds.
    const vs_ar = (label, c) => groups.get(label + "|" + c).map((r, i) => r.tokens_per_s / groups.get("ar|" + c)[i].tokens_per_s);
    console.log("| method | clients | tokens/s | vs AR | vs AR, rounds | vs 1 client | p50 ms | p99 ms | tokens/step | acceptance | step ms: fixed + per row |");
    console.log("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (const label of ["ar", "sd", "sam", "csd"])
      for (const c of [...new Set(rows.map((r) => r.clients))]) {
        const tps = med(label, c, "tokens_per_s");
        const known = (field) => groups.get(label + "|" + c).map((r) => r[field]).filter((x) => x != null);
        const steps = known("tokens_per_step"), acc = known("acceptance");
        const fixed = known("step_fixed_ms"), row = known("step_row_ms");
        const line = fixed.length && row.length ? `${median(fixed).toFixed(2)} + ${median(row).toFixed(3)}` : "-";
        const ratios = vs_ar(label, c);
        console.log(`| ${label} | ${c} | ${tps.toFixed(1)} | ${median(ratios).toFixed(2)} | ${Math.min(...ratios).toFixed(2)}-${Math.max(...ratios).toFixed(2)} | ` +
                    `${(tps / med(label, 1, "tokens_per_s")).toFixed(2)} | ` +
                    `${med(label, c, "p50_ms").toFixed(1)} | ${med(label, c, "p99_ms").toFixed(1)} | ${steps.length ? median(steps).toFixed(2) : "-"} | ${acc.length ? median(acc).toFixed(3) : "-"} | ${line} |`);
      }
  ' "$raw"
  echo "# every run (serve_load.js JSON lines)"
  cat "$raw"
} > "$out"
echo "serve_figures: wrote $out" >&2
