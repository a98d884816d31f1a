#!/usr/bin/env bash
# Submits one specd calibration as a Slurm job array of N shards plus the merge that runs when all
# of them succeeded; prints the job ids. Run it from the repository's root (the jobs run there).
#
#   scripts/slurm/submit.sh OUT N CALIBRATION [calibrate options...]
#   e.g. scripts/slurm/submit.sh runs/csd 8 csd --target data/models/demo-large-target
#
# The merged artifact is OUT/merged. `calibrate arc` with its default deploy sites runs in two
# stages, each an array and a merge, the second waiting for the first: the pilot (OUT/pilot/shard-*,
# merged into OUT/pilot/merged), then the deploy sites with that pilot's constants (OUT/shard-*,
# merged into OUT/merged). sbatch's own environment variables choose the partition, time limit
# and cores per task (SBATCH_PARTITION, SBATCH_TIMELIMIT, SBATCH_CPUS_PER_TASK, ...); SPECD names
# the binary. docs/cluster.md: sizing shards, failed tasks, reruns.
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: $0 OUT N CALIBRATION [calibrate options...]" >&2; exit 2; }
out=$1 shards=$2 calibration=$3
shift 3
[[ $shards =~ ^[1-9][0-9]*$ ]] || { echo "submit.sh: N must be a positive integer (got '$shards')" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)

# An array of N shards into DIR/shard-*, then its merge into DIR/merged, the array waiting for job
# AFTER when one is given; sets $array and $merge.
submit_stage() {
  local dir=$1 after=$2
  shift 2
  local wait=()
  [ -n "$after" ] && wait=(--dependency="afterok:$after")
  mkdir -p "$dir/logs"
  array=$(sbatch --parsable "${wait[@]}" --array="0-$((shards - 1))" --output="$dir/logs/shard-%a.log" "$here/calibrate.sbatch" "$dir" "$shards" "$calibration" "$@")
  array=${array%%;*}
  merge=$(sbatch --parsable --dependency="afterok:$array" --output="$dir/logs/merge.log" "$here/merge.sbatch" "$dir" "$shards")
  merge=${merge%%;*}
}

two_stages=no
if [ "$calibration" = arc ]; then
  two_stages=yes
  previous=
  for option in "$@"; do
    case "$previous $option" in
      "--sites candidates" | *" --sites=candidates") two_stages=no ;;
    esac
    case $option in
      --stage | --stage=* | --pilot | --pilot=*) echo "submit.sh: $option: the stages are submitted by this script (leave --stage and --pilot out)" >&2; exit 2 ;;
    esac
    previous=$option
  done
fi

if [ $two_stages = yes ]; then
  submit_stage "$out/pilot" "" "$@" --stage pilot
  echo "pilot: array $array ($shards shards into $out/pilot/shard-*); its merge $merge (into $out/pilot/merged)"
  submit_stage "$out" "$merge" "$@" --stage deploy --pilot "$out/pilot/merged"
else
  submit_stage "$out" "" "$@"
fi
echo "array $array ($shards shards into $out/shard-*), merge $merge (into $out/merged)"
