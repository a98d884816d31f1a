#!/usr/bin/env bash
# Whether the machine's caches keep a model's weights while it sits idle (docs/serving.md, Load):
# `specd bench --idle-gaps` on the large target and on the small demo target, the one-token forwards
# after pauses of GAPS ms against back-to-back ones. Where the weights stay cached only while they
# are read without pause, a draft model's turn costs the target more than its own time. Run on a
# quiet machine. Raw output: reports/bench/idle-gaps.txt (OUT=). Needs a built specd.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/machine_stamp.sh
specd=${SPECD:-build/cli/specd}
out=${OUT:-reports/bench/idle-gaps.txt}
gaps=${GAPS:-1 3 13 50}
repeats=${REPEATS:-10}
trap 'rm -f "$out.partial"' EXIT
{
  machine_stamp
  for model in data/models/demo-large-target data/models/demo-target; do
    echo "# specd bench --model $model --prompt-lengths 32 --forward-sizes 1 --repeats $repeats --idle-gaps $gaps"
    # shellcheck disable=SC2086
    "$specd" bench --model "$model" --prompt-lengths 32 --forward-sizes 1 --repeats "$repeats" --idle-gaps $gaps 2> /dev/null |
      grep -E "CPU:|measured ceilings|autoregressive decode|GB/s \(|idle|peak RSS"
  done
} > "$out.partial"
mv "$out.partial" "$out"
echo "idle_gap_figures: wrote $out" >&2
