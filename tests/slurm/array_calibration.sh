#!/usr/bin/env bash
# A calibration as a Slurm job array on a real single-node cluster (scripts/slurm/local_cluster.sh):
# scripts/slurm/submit.sh runs `calibrate csd` on the demo pair as 3 shards and merges them when
# all succeeded; the merged artifact must hold what the unsharded run holds, and record each
# shard's job and task. So must `calibrate arc`'s two stages (pilot, then deploy sites). Then one task is requeued mid-run (scontrol requeue: killed and put back,
# as a preemption does); it resumes from its journal and the merge is still the same.
# Prints SPECD-TEST-SKIPPED (ctest: Skipped) when Slurm cannot start on this machine.
#
#   tests/slurm/array_calibration.sh SPECD WORK_DIR
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 SPECD WORK_DIR" >&2; exit 2; }
specd=$1 work=$2
cd "$(dirname "$0")/../.."
rm -rf "$work"
mkdir -p "$work"
cluster=$work/cluster

status=0
scripts/slurm/local_cluster.sh start "$cluster" || status=$?
if [ $status -eq 77 ]; then
  echo "SPECD-TEST-SKIPPED: Slurm cannot run on this machine (see the line above)"
  exit 0
fi
[ $status -eq 0 ] || exit "$status"
trap 'scripts/slurm/local_cluster.sh stop "$cluster"' EXIT
export SLURM_CONF=$cluster/slurm.conf SPECD=$specd

fail() { echo "array_calibration: $*" >&2; exit 1; }
job_state() { scontrol show job "$1" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' | head -n 1; }
job_reason() { scontrol show job "$1" 2>/dev/null | sed -n 's/.*Reason=\([A-Za-z_]*\).*/\1/p' | head -n 1; }
# Waits until job $1 (a job or one array task, J_I) is in state $2, failing on a final other state.
wait_state() {
  local job=$1 want=$2 end=$((SECONDS + ${3:-300})) state
  while :; do
    state=$(job_state "$job")
    [ "$state" = "$want" ] && return 0
    case $state in
      FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY) fail "job $job is $state (logs in $work)" ;;
    esac
    [ "$(job_reason "$job")" = DependencyNeverSatisfied ] && fail "job $job can never run: a task it depends on failed (logs in $work)"
    [ $SECONDS -lt $end ] || fail "job $job is still $state, not $want, after ${3:-300} s"
    sleep 0.5
  done
}

pair=(--target data/models/demo-target --draft data/models/demo-draft --max-prompts 48 --max-new-tokens 64)
"$specd" calibrate csd "${pair[@]}" --out "$work/whole" > /dev/null

# 1. Three shards and their merge.
submitted=$(scripts/slurm/submit.sh "$work/run" 3 csd "${pair[@]}")
echo "$submitted"
array=$(echo "$submitted" | sed -n 's/^array \([0-9]*\) .*/\1/p')
merge=$(echo "$submitted" | sed -n 's/.*, merge \([0-9]*\) .*/\1/p')
wait_state "$merge" COMPLETED
"$specd" artifact diff "$work/run/merged" "$work/whole"
"$specd" artifact inspect --json "$work/run/merged" | node -e '
  const [array] = process.argv.slice(1);
  const shards = JSON.parse(require("fs").readFileSync(0, "utf8")).calibrations.csd.shards;
  if (shards.length !== 3) throw new Error(`${shards.length} shards recorded, not 3`);
  shards.forEach((s, i) => {
    const job = s.shard.job;
    if (!job || job.scheduler !== "slurm" || job.job_id !== array || job.task_id !== String(i))
      throw new Error(`shard ${i} records job ${JSON.stringify(job)}, not task ${i} of Slurm job ${array}`);
  });' "$array"

# 2. calibrate arc with its deploy sites: two stages, each an array and a merge (the deploy
# array waits for the pilot's merge); the final merge holds the unsharded run's samples, gate and theta.
arc=(--target data/models/demo-target --draft data/models/demo-draft --max-prompts 12 --max-new-tokens 48 --temperature 1
     --audit-per-category 1 --theta-grid 0.9,0.3)
"$specd" calibrate arc "${arc[@]}" --out "$work/arc-whole" > /dev/null
submitted=$(scripts/slurm/submit.sh "$work/arc" 3 arc "${arc[@]}")
echo "$submitted"
echo "$submitted" | grep -q '^pilot: array ' || fail "arc was not submitted in two stages"
wait_state "$(echo "$submitted" | sed -n 's/.*, merge \([0-9]*\) .*/\1/p')" COMPLETED
"$specd" artifact diff "$work/arc/merged" "$work/arc-whole" || fail "calibrate arc's two sharded stages differ from the unsharded run"

# 3. Task 1 requeued once it has finished a prompt: it resumes from its journal. A task is a few
# seconds long; when it ends before it could be requeued, try again (at most 3 times).
requeue_run() {
  local dir=$1 submitted array merge journal end
  submitted=$(scripts/slurm/submit.sh "$dir" 3 csd "${pair[@]}")
  echo "$submitted"
  array=$(echo "$submitted" | sed -n 's/^array \([0-9]*\) .*/\1/p')
  merge=$(echo "$submitted" | sed -n 's/.*, merge \([0-9]*\) .*/\1/p')
  journal=$dir/shard-1.csd-journal.sqlite
  end=$((SECONDS + 300))
  until [ -f "$journal" ] && [ "$(sqlite3 "$journal" 'SELECT count(*) FROM prompts' 2>/dev/null || echo 0)" -ge 1 ]; do
    if [ "$(job_state "${array}_1")" = COMPLETED ]; then
      wait_state "$merge" COMPLETED
      return 2
    fi
    [ $SECONDS -lt $end ] || fail "task 1 finished no prompt in 300 s"
    sleep 0.05
  done
  # (set -e does not hold inside a function called with ||: each step says so itself.)
  scontrol requeue "${array}_1" || fail "scontrol requeue ${array}_1 failed"
  wait_state "${array}_1" PENDING 60
  # Slurm holds a requeued job back for a while (BeginTime); release it now.
  scontrol update jobid="${array}_1" StartTime=now || fail "could not release ${array}_1"
  wait_state "$merge" COMPLETED
  grep -q "restart 1" "$dir/logs/shard-1.log" || fail "task 1 did not run again (its log: $(tail -n 3 "$dir/logs/shard-1.log"))"
  grep -q "resuming" "$dir/logs/shard-1.log" || fail "task 1 did not resume from its journal"
  "$specd" artifact diff "$dir/merged" "$work/whole" || fail "the merge after a requeue differs from the unsharded run"
}
requeued=no
for attempt in 1 2 3; do
  status=0
  requeue_run "$work/requeue-$attempt" || status=$?
  [ $status -eq 2 ] && continue
  [ $status -eq 0 ] || exit "$status"
  requeued=yes
  break
done
[ $requeued = yes ] || fail "task 1 ended before it could be requeued, 3 times"
echo "array_calibration: 3 shards merged equal the unsharded run (csd, and arc in two stages), also with task 1 requeued mid-run"
