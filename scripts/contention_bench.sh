#!/usr/bin/env bash
# The kernels' thread pool on a shared machine: decode speed of `specd bench` with 1 and 2
# threads, alone and beside one busy process (a shell loop holding a core), for each model given.
# Issue 29 item 7 asks that N threads never be slower than one under contention.
#   scripts/contention_bench.sh [SPECD...]   (default build/cli/specd; several binaries: rounds
#                                             take turns, so before/after share the machine's mood)
# Raw output: reports/bench/contention.txt (OUT to change). Run on an otherwise quiet machine.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/machine_stamp.sh
binaries=("$@")
[ ${#binaries[@]} -gt 0 ] || binaries=(build/cli/specd)
out=${OUT:-reports/bench/contention.txt}
rounds=${ROUNDS:-2}
models=(${MODELS:-data/models/demo-target data/models/demo-large-target})
decode() {  # ms/token of autoregressive decode
  "$1" bench --model "$2" --threads "$3" --repeats 5 --forward-sizes 1 --json 2>/dev/null |
    node -e 'let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => console.log(JSON.parse(s).decode_ms_per_token.toFixed(3)))'
}
{
  machine_stamp
  echo "# decode ms/token (specd bench, median of 5); busy: one shell loop spinning beside it"
  for round in $(seq "$rounds"); do
    for model in "${models[@]}"; do
      for bin in "${binaries[@]}"; do
        line="round $round  $(basename "$model")  $bin:"
        for busy in alone busy; do
          pid=
          if [ $busy = busy ]; then (while :; do :; done) & pid=$!; sleep 0.5; fi
          for threads in 1 2; do line+="  $busy-t$threads $(decode "$bin" "$model" $threads)"; done
          [ -n "$pid" ] && kill "$pid" && wait "$pid" 2>/dev/null || true
        done
        echo "$line"
      done
    done
  done
} | tee "$out"
