#!/usr/bin/env bash
# The figures of docs/cluster.md: calibrate csd and arc on the large demo pair (TARGET and DRAFT
# name another) as Slurm job arrays of 1,
# 2 and 4 shards on the single-node cluster of local_cluster.sh (the cores are shared, so each
# shard's throughput is reported beside the wall time), and the merge's time against the number of
# shards. Writes reports/bench/slurm-shards.txt. Needs a built specd and a quiet machine.
set -euo pipefail
cd "$(dirname "$0")/../.."
export SPECD=${SPECD:-build/cli/specd}
work=${WORK:-build/slurm-measure}
out=reports/bench/slurm-shards.txt
pair=(--target "${TARGET:-data/models/demo-large-target}" --draft "${DRAFT:-data/models/demo-large-draft}")
csd_prompts=${CSD_PROMPTS:-181}
arc_prompts=${ARC_PROMPTS:-60}
rm -rf "$work"
scripts/slurm/local_cluster.sh start "$work/cluster"
trap 'scripts/slurm/local_cluster.sh stop "$work/cluster"' EXIT
export SLURM_CONF=$work/cluster/slurm.conf

# Seconds from the array's submission to the merge's end, read from the jobs' records.
wait_done() {
  local job=$1
  while :; do
    local state
    state=$(scontrol show job "$job" | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' | head -n 1)
    case $state in
      COMPLETED) return 0 ;;
      FAILED|CANCELLED|TIMEOUT) echo "measure_shards: job $job is $state" >&2; exit 1 ;;
    esac
    sleep 0.5
  done
}

{
  echo "# specd calibrate as Slurm job arrays on one node ($(nproc) cores), $(date -u +%Y-%m-%d)"
  echo "# CPU: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1); scripts/slurm/measure_shards.sh"
  echo "# one task per core: --cpus-per-task 1, one thread each; ${pair[*]}"
  # arc: the paper's candidate samples (one array), and the default deploy sites (two stages:
  # the pilot's array and merge, then the deploy sites' array and merge).
  for kind in csd arc-candidates arc-deploy; do
    calibration=${kind%%-*}
    prompts=$csd_prompts
    options=("${pair[@]}")
    case $kind in
      arc-candidates) prompts=$arc_prompts; options+=(--sites candidates --temperature 1 --audit-per-category 1) ;;
      arc-deploy) prompts=$arc_prompts; options+=(--temperature 1 --audit-per-category 1) ;;
    esac
    for shards in 1 2 4; do
      dir=$work/$kind-$shards
      start=$(date +%s.%N)
      submitted=$(scripts/slurm/submit.sh "$dir" "$shards" "$calibration" "${options[@]}" --max-prompts "$prompts")
      merge=$(echo "$submitted" | sed -n 's/.*, merge \([0-9]*\) .*/\1/p')
      wait_done "$merge"
      end=$(date +%s.%N)
      echo
      echo "== $kind, $prompts prompts, $shards shards: $(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }') s from submission to merged =="
      if [ -d "$dir/pilot/merged" ]; then
        echo "  pilot stage:"
        "$SPECD" artifact inspect "$dir/pilot/merged" | sed -n '/merged from/,/^[^ ]/p' | grep -E '^\s+[0-9]+:|merged from'
        echo "  deploy stage (each shard's time includes its pilot units' share):"
      fi
      "$SPECD" artifact inspect "$dir/merged" | sed -n '/merged from/,/^[^ ]/p' | grep -E '^\s+[0-9]+:|merged from'
      # The merge's own time: merge the same shards again.
      inputs=()
      for ((i = 0; i < shards; ++i)); do inputs+=("$dir/shard-$i"); done
      t0=$(date +%s.%N)
      "$SPECD" artifact merge --out "$dir/merged-again" "${inputs[@]}" > /dev/null
      t1=$(date +%s.%N)
      echo "merge of $shards shards: $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }') s"
    done
  done
} | tee "$out"
