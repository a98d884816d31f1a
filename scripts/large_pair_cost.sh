#!/usr/bin/env bash
# The trained large demo pair's costs on this machine (issue figures of docs/models.md): the cost
# of verifying n tokens against one with the target (specd bench --forward-sizes 1 2 4 8 16, its
# decode against the read bandwidth bench measures), and the draft's decode, in three rounds that
# take turns so that a busy spell of the shared machine hits both alike. Run on a quiet machine.
# Raw output: reports/bench/large-pair-cost.txt. Needs a built specd (scripts/build.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/machine_stamp.sh
specd=${SPECD:-build/cli/specd}
out=${OUT:-reports/bench/large-pair-cost.txt}
target=data/models/demo-large-target
draft=data/models/demo-large-draft
{
  machine_stamp
  for round in 1 2 3; do
    echo "== round $round: target $target"
    "$specd" bench --model "$target" --forward-sizes 1 2 4 8 16 --repeats 10 --threads 2 2>&1
    echo "== round $round: draft $draft"
    "$specd" bench --model "$draft" --forward-sizes 1 --repeats 10 --threads 2 2>&1
  done
} > "$out"
echo "large_pair_cost: wrote $out" >&2
