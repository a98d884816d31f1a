#!/usr/bin/env bash
# What a draft model's forward does to the target's next verification (docs/serving.md, Load): the
# large target verifying drafts from retrieval (pld, no model), from the small demo draft (2 MB of
# weights) and from its own distilled draft (11 MB), `specd bench --traces` on the workload
# prompts, in ROUNDS rounds that take turns; per configuration, the mean verify time of the steps
# that verified n rows (the traces' steps.verify_ms): what a draft model's drafting costs the
# target's next verification beyond its own forwards. Run on a quiet machine. Raw output:
# reports/bench/verify-after-draft.txt. Needs a built specd (scripts/build.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/machine_stamp.sh
specd=${SPECD:-build/cli/specd}
out=${OUT:-reports/bench/verify-after-draft.txt}
rounds=${ROUNDS:-3}
target=data/models/demo-large-target
work=$(mktemp -d)
trap 'rm -rf "$work" "$out.partial"' EXIT
configs=("pld data/models/demo-large-draft" "sd data/models/demo-draft" "sd data/models/demo-large-draft")
for round in $(seq 1 "$rounds"); do
  for i in "${!configs[@]}"; do
    read -r method draft <<< "${configs[$i]}"
    echo "verify_after_draft: round $round, $method with $draft" >&2
    "$specd" bench --model "$target" --draft "$draft" --methods "$method" --max-prompts 2 --repeats 1 \
      --traces "$work/$i-$round.sqlite" > /dev/null
  done
done
{
  machine_stamp
  echo "# $rounds rounds, specd bench --max-prompts 2 --repeats 1 on the large target; verify ms by rows (steps with at least 5 of them)"
  echo "| drafts from | draft weights | rows | steps | verify ms, mean | draft ms, mean |"
  echo "|---|---:|---:|---:|---:|---:|"
  for i in "${!configs[@]}"; do
    read -r method draft <<< "${configs[$i]}"
    if [ "$method" = pld ]; then what="pld (retrieval)" weights=-
    else what="sd, $(basename "$draft")" weights=$(du -sh "$draft" | cut -f1); fi
    for db in "$work/$i"-*.sqlite; do sqlite3 -separator ' ' "$db" "SELECT draft_size + 1, verify_ms, draft_ms FROM steps"; done |
      awk -v what="$what" -v weights="$weights" '{ n[$1]++; v[$1] += $2; d[$1] += $3 }
        END { for (r = 1; r <= 8; r++) if (n[r] >= 5) printf "| %s | %s | %d | %d | %.2f | %.2f |\n", what, weights, r, n[r], v[r] / n[r], d[r] / n[r] }'
  done
} > "$out.partial"
mv "$out.partial" "$out"
echo "verify_after_draft: wrote $out" >&2
