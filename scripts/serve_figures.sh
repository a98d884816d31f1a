#!/usr/bin/env bash
# specd serve under load (docs/serving.md): one server of the large demo pair with its artifact,
# and scripts/serve_load.js at 1, 2, 4 and 8 concurrent clients for AR, sd (the best lossless
# method with a draft model on that pair) and CSD (calibrated, lossy), each method asked for per
# request. Greedy, 64 new tokens, the qa workload's prompts. Run on a quiet machine.
# Raw output: reports/bench/serve-load.txt. Needs a built specd (scripts/build.sh) and the large
# pair's artifact (scripts/demo.sh makes artifacts/demo-large-pair).
set -euo pipefail
cd "$(dirname "$0")/.."
specd=${SPECD:-build/cli/specd}
out=${OUT:-reports/bench/serve-load.txt}
artifact=${ARTIFACT:-artifacts/demo-large-pair}
requests=${REQUESTS:-8}
clients=${CLIENTS:-1,2,4,8}
port=${PORT:-8391}
log=$(mktemp)
"$specd" serve --artifact "$artifact" --port "$port" --parallel 8 --queue 8 --max-tokens 64 2> "$log" &
server=$!
trap 'kill -TERM $server 2>/dev/null; wait $server 2>/dev/null; rm -f "$log"' EXIT
for _ in $(seq 1 120); do
  grep -q "on http://" "$log" && break
  kill -0 $server 2>/dev/null || { cat "$log" >&2; exit 1; }
  sleep 0.5
done
url=http://127.0.0.1:$port
{
  echo "# scripts/serve_figures.sh, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) cores, $(date -u +%Y-%m-%d)"
  grep "on http://" "$log"
  for method in ar sd csd; do
    lossy=(); [ "$method" = csd ] && lossy=(--allow-lossy)
    node scripts/serve_load.js --url "$url" --prompts data/workloads/qa.jsonl --clients "$clients" --requests "$requests" \
      --max-tokens 64 --method "$method" "${lossy[@]}"
  done
} > "$out"
echo "serve_figures: wrote $out" >&2
