#!/usr/bin/env bash
# Submits one specd calibration as a Slurm job array of N shards plus the merge that runs when all
# of them succeeded; prints the two job ids. Run it from the repository's root (the jobs run there).
#
#   scripts/slurm/submit.sh OUT N CALIBRATION [calibrate options...]
#   e.g. scripts/slurm/submit.sh runs/csd 8 csd --target data/models/demo-large-target
#
# The merged artifact is OUT/merged. sbatch's own environment variables choose the partition,
# time limit and cores per task (SBATCH_PARTITION, SBATCH_TIMELIMIT, SBATCH_CPUS_PER_TASK, ...);
# SPECD names the binary. docs/cluster.md: sizing shards, failed tasks, reruns.
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: $0 OUT N CALIBRATION [calibrate options...]" >&2; exit 2; }
out=$1 shards=$2
[[ $shards =~ ^[1-9][0-9]*$ ]] || { echo "submit.sh: N must be a positive integer (got '$shards')" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out/logs"
array=$(sbatch --parsable --array="0-$((shards - 1))" --output="$out/logs/shard-%a.log" "$here/calibrate.sbatch" "$@")
array=${array%%;*}
merge=$(sbatch --parsable --dependency="afterok:$array" --output="$out/logs/merge.log" "$here/merge.sbatch" "$out" "$shards")
merge=${merge%%;*}
echo "array $array ($shards shards into $out/shard-*), merge $merge (into $out/merged)"
