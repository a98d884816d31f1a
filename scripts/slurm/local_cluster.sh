#!/usr/bin/env bash
# A single-node Slurm cluster on this machine, for tests and for trying the sbatch scripts before
# a real cluster: munged, slurmctld and slurmd on localhost, every file (configuration, keys,
# state, spool, logs) under one directory, nothing in /etc or /run.
#
#   scripts/slurm/local_cluster.sh start DIR   # writes DIR/slurm.conf, starts the daemons, waits
#                                              # until the node is idle; prints the SLURM_CONF line
#   scripts/slurm/local_cluster.sh stop DIR    # cancels every job, stops the daemons, waits for them
#   scripts/slurm/local_cluster.sh status DIR  # sinfo and squeue
#
# Then point the Slurm commands at it: export SLURM_CONF=DIR/slurm.conf.
# Exit 77 from start when this machine cannot run Slurm (a package or a port missing), with the
# reason on stderr, so that a test can report Skipped; any other failure exits 1.
# Needs Debian's slurmctld, slurmd, slurm-client and munge (scripts/setup.sh installs them).
set -euo pipefail

usage() { echo "usage: $0 start|stop|status DIR" >&2; exit 2; }
[ $# -eq 2 ] || usage
action=$1
mkdir -p "$2"
dir=$(cd "$2" && pwd)
conf=$dir/slurm.conf
log() { echo "local_cluster: $*" >&2; }
skip() { log "cannot run Slurm here: $*"; exit 77; }

# Waits up to $1 seconds for the command that follows to succeed.
wait_for() {
  local seconds=$1; shift
  local end=$((SECONDS + seconds))
  until "$@" >/dev/null 2>&1; do
    [ $SECONDS -lt $end ] || return 1
    sleep 0.2
  done
}

free_port() {
  node -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); });'
}

pid_alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

start() {
  for tool in munged mungekey slurmctld slurmd sbatch sinfo scontrol node; do
    command -v "$tool" >/dev/null || skip "$tool is not installed (scripts/setup.sh installs Slurm and munge)"
  done
  if pid_alive "$dir/slurmctld.pid"; then log "already running in $dir"; return 0; fi
  mkdir -p "$dir/munge" "$dir/state" "$dir/spool"
  chmod 0700 "$dir/munge"
  # munged refuses a key or socket directory others could write to.
  [ -f "$dir/munge/munge.key" ] || mungekey --create --keyfile="$dir/munge/munge.key" 2>/dev/null ||
    dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
  chmod 0400 "$dir/munge/munge.key"
  munged --force --socket="$dir/munge/munge.socket" --key-file="$dir/munge/munge.key" \
    --pid-file="$dir/munge/munged.pid" --log-file="$dir/munge/munged.log" --seed-file="$dir/munge/munged.seed" ||
    skip "munged did not start (see $dir/munge/munged.log)"

  local host node_line ctld_port slurmd_port user
  host=$(hostname -s)
  # The node as slurmd detects it (CPUs, sockets, cores, memory), so that the two agree.
  node_line=$(slurmd -C | head -n 1)
  ctld_port=$(free_port)
  slurmd_port=$(free_port)
  user=$(id -un)
  cat > "$conf" <<EOF
# Written by scripts/slurm/local_cluster.sh: a single-node cluster on $host.
ClusterName=specd-local
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=$user
SlurmdUser=$user
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
JobRequeue=1
ReturnToService=2
MinJobAge=600
$node_line NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=local Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
  export SLURM_CONF=$conf
  slurmctld -f "$conf" || skip "slurmctld did not start (see $dir/slurmctld.log)"
  slurmd -f "$conf" || skip "slurmd did not start (see $dir/slurmd.log)"
  wait_for 30 bash -c '[ "$(sinfo -h -o %T 2>/dev/null)" = idle ]' ||
    skip "the node did not come up idle within 30 s (sinfo: $(sinfo -h -o '%T %E' 2>&1 | head -n 1); see $dir/slurmctld.log)"
  log "running: export SLURM_CONF=$conf"
}

stop() {
  export SLURM_CONF=$conf
  if [ -f "$conf" ] && pid_alive "$dir/slurmctld.pid"; then
    scancel --full --quiet --user "$(id -un)" 2>/dev/null || true
  fi
  local pidfile
  for pidfile in "$dir/slurmd.pid" "$dir/slurmctld.pid" "$dir/munge/munged.pid"; do
    if pid_alive "$pidfile"; then
      local pid
      pid=$(cat "$pidfile")
      kill "$pid" 2>/dev/null || true
      wait_for 20 bash -c "! kill -0 $pid" || kill -9 "$pid" 2>/dev/null || true
    fi
  done
  # Job steps that outlived slurmd (linuxproc tracks them by parent process).
  pkill -f "slurmstepd.*$dir" 2>/dev/null || true
}

case $action in
  start) start ;;
  stop) stop ;;
  status) SLURM_CONF=$conf sinfo; SLURM_CONF=$conf squeue ;;
  *) usage ;;
esac
