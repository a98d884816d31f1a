#!/usr/bin/env bash
# specd serve under load (docs/serving.md): one server of the large demo pair with its artifact,
# and scripts/serve_load.js at 1, 2, 4 and 8 concurrent clients for AR, sd (the lossless method
# with a draft model), sam (the fastest lossless method on this pair: its corpus, and the draft
# model's tree when retrieval finds nothing) and CSD (calibrated, lossy), each method asked for per
# request. Greedy, 64 new tokens, the qa workload's prompts, ROUNDS rounds; in each, every
# concurrency in turn, and at each the methods one after another, each round starting from the
# next method (a concurrency's cells of the methods run seconds apart, no method always first: the
# shared machine's speed swings by a third from one few-second cell to the next, and with each
# method's four concurrencies run together, AR always first, a round's paired cells were tens of
# seconds apart); scripts/lib/serve_summary.js
# makes the table (whether a method is slower than AR under load is decided by its interval over
# the rounds, not by one round), with the server's fitted step cost (ms fixed + ms per verified
# row, its /metrics) after each run: how dear verifying a draft was on this machine. GUARD_AB=1
# also starts a server with --drafting-guard off and runs every method against it in every round
# (labelled METHOD-unguarded), the servers taking turns going first: the guard's effect, paired by
# round. AR runs on both, so that the two servers' step-cost fits see the same traffic (AR's steps
# enter the batch planner's fits too), and ar against ar-unguarded shows how far two servers differ
# where the guard has nothing to decide (with the guarded server always first, its AR ran 0.94x the
# other's: 20 rounds at 2 clients, AVX2 EPYC). Run on a quiet machine.
# Raw output: reports/bench/serve-load.txt. Needs a built specd (scripts/build.sh) and the large
# pair's artifact (scripts/demo.sh makes artifacts/demo-large-pair). CLIENTS and METHODS narrow a
# run to the cells in question (more rounds where an interval is too wide to decide). STEP_LOG=FILE
# records the default server's every step there (`specd serve --step-log`; read it with
# scripts/step_log_summary.py). SERVE_ARGS adds options to every server (e.g. "--prefill-chunk 16").
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/machine_stamp.sh
source scripts/lib/serve_wait.sh
specd=${SPECD:-build/cli/specd}
out=${OUT:-reports/bench/serve-load.txt}
artifact=${ARTIFACT:-artifacts/demo-large-pair}
requests=${REQUESTS:-8}
rounds=${ROUNDS:-20}
clients=${CLIENTS:-1,2,4,8}
methods=${METHODS:-ar sd sam csd}  # every method is compared with its round's AR run
case " $methods " in *" ar "*) ;; *) echo "serve_figures: METHODS must include ar" >&2; exit 2;; esac
port=${PORT:-8391}
log=$(mktemp)
raw=$(mktemp)
guard_ab=${GUARD_AB:-0}
first_guard=on; [ "$guard_ab" = control ] && { first_guard=off; guard_ab=1; }  # both unguarded: what the design alone measures
log2=$(mktemp)
# exec: $! is then the server itself, which the trap stops
serve() { exec "$specd" serve --artifact "$artifact" --parallel 8 --queue 8 --max-tokens 64 ${SERVE_ARGS:-} "$@"; }
step_log=(); [ -n "${STEP_LOG:-}" ] && step_log=(--step-log "$STEP_LOG")
serve --port "$port" --drafting-guard $first_guard "${step_log[@]}" 2> "$log" &
server=$!
server2=
keep_runs=  # set while the summary is made: if it fails, the runs stay for a rerun of it
trap 'kill -TERM $server $server2 2>/dev/null; wait $server $server2 2>/dev/null; rm -f "$log" "$log2" "$out.partial"
      if [ -n "$keep_runs" ]; then echo "serve_figures: the runs are kept in $raw" >&2; else rm -f "$raw"; fi' EXIT
wait_for_server "$log" $server
if [ "$guard_ab" = 1 ]; then  # idle, a server's decoding thread waits: the two do not compete
  serve --port $((port + 1)) --drafting-guard off 2> "$log2" &
  server2=$!
  wait_for_server "$log2" $server2
fi
# One run of a method at one concurrency against one server; the second server's runs are
# labelled METHOD-unguarded.
load() {
  local lossy=(); [ "$2" = csd ] && lossy=(--allow-lossy)
  node scripts/serve_load.js --url "http://127.0.0.1:$1" --prompts data/workloads/qa.jsonl --clients "$3" \
    --requests "$requests" --max-tokens 64 --method "$2" "${lossy[@]}" ${4:+--label "$2$4"} | grep '^{' >> "$raw"
}
read -r -a method_list <<< "$methods"
for round in $(seq 1 "$rounds"); do
  echo "serve_figures: round $round of $rounds" >&2
  for c in ${clients//,/ }; do
    for i in "${!method_list[@]}"; do
      method=${method_list[$(( (i + round - 1) % ${#method_list[@]} ))]}
      if [ "$guard_ab" != 1 ]; then
        load "$port" "$method" "$c"
      elif [ $((round % 2)) = 1 ]; then  # the servers take turns going first: a run right after another is not favoured
        load "$port" "$method" "$c"; load $((port + 1)) "$method" "$c" -unguarded
      else
        load $((port + 1)) "$method" "$c" -unguarded; load "$port" "$method" "$c"
      fi
    done
  done
done
keep_runs=1
{
  machine_stamp
  grep "on http://" "$log"
  if [ "$guard_ab" = 1 ]; then grep "on http://" "$log2" | sed 's/$/ (--drafting-guard off)/'; fi
  echo "# $rounds rounds, $requests requests per client per round, 64 new tokens, greedy; medians over the rounds; vs AR: geometric mean of the rounds' ratios, its 95% bootstrap interval, their range"
  node scripts/lib/serve_summary.js "$raw"
  echo "# every run (serve_load.js JSON lines)"
  cat "$raw"
} > "$out.partial"
mv "$out.partial" "$out"
keep_runs=
echo "serve_figures: wrote $out" >&2
