#!/usr/bin/env bash
# What `specd serve --prefill-chunk` buys (docs/serving.md#prefill-in-chunks): one server of the
# large demo pair per setting of CHUNKS, and scripts/serve_load.js --stream at CLIENTS concurrent
# clients on the rag workload (its prompts are the longest, ~250 tokens), AR and sd, ROUNDS rounds
# in which the settings take turns. Each request's prefill shares steps with the others' decoding:
# the stream's gaps between text arrivals (p99, largest) show the stall a newcomer's prompt puts on
# the requests beside it, the time to first text what chunking costs the newcomer. Medians over
# the rounds. Run on a quiet machine. Raw output: reports/bench/serve-prefill-chunk.txt. Needs a
# built specd (scripts/build.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/machine_stamp.sh
source scripts/lib/serve_wait.sh
specd=${SPECD:-build/cli/specd}
out=${OUT:-reports/bench/serve-prefill-chunk.txt}
chunks=${CHUNKS:-0 64 16}
clients=${CLIENTS:-4}
requests=${REQUESTS:-6}
rounds=${ROUNDS:-3}
port=${PORT:-8392}
raw=$(mktemp)
log=$(mktemp)
server=
stop_server() { [ -n "$server" ] && { kill -TERM "$server" 2>/dev/null; wait "$server" 2>/dev/null || true; }; server=; }
trap 'stop_server; rm -f "$raw" "$log"' EXIT
url=http://127.0.0.1:$port
for round in $(seq 1 "$rounds"); do
  for chunk in $chunks; do
    echo "prefill_chunk_figures: round $round of $rounds, --prefill-chunk $chunk" >&2
    "$specd" serve --port "$port" --parallel "$clients" --queue 8 --max-tokens 64 --prefill-chunk "$chunk" 2> "$log" &
    server=$!
    wait_for_server "$log" "$server"
    for method in ar sd; do
      node scripts/serve_load.js --url "$url" --prompts data/workloads/rag.jsonl --clients "$clients" --requests "$requests" \
        --max-tokens 64 --method "$method" --stream --label "$method chunk $chunk" | grep '^{' >> "$raw"
    done
    stop_server
  done
done
{
  machine_stamp
  echo "# specd serve --parallel $clients --prefill-chunk {$chunks}; rag prompts, $clients clients, $requests requests each, 64 new tokens, greedy, streamed; medians over $rounds rounds"
  node -e '
    const rows = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n").map(JSON.parse);
    const median = (xs) => { const s = [...xs].sort((a, b) => a - b); const m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };
    const groups = new Map();
    for (const r of rows) { if (!groups.has(r.label)) groups.set(r.label, []); groups.get(r.label).push(r); }
    console.log("| method, --prefill-chunk | tokens/s | latency p50 / p99 ms | first text p50 / p99 ms | gap p99 / max ms |");
    console.log("|---|---:|---:|---:|---:|");
    for (const [label, runs] of groups) {
      const m = (field) => median(runs.map((r) => r[field])).toFixed(1);
      console.log(`| ${label} | ${m("tokens_per_s")} | ${m("p50_ms")} / ${m("p99_ms")} | ${m("ttft_p50_ms")} / ${m("ttft_p99_ms")} | ${m("gap_p99_ms")} / ${m("gap_max_ms")} |`);
    }
  ' "$raw"
  echo "# every run (serve_load.js JSON lines)"
  cat "$raw"
} > "$out"
echo "prefill_chunk_figures: wrote $out" >&2
