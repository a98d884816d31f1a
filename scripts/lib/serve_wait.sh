# Sourced by the serving figure scripts: `wait_for_server LOG PID` waits (up to a minute) until the
# `specd serve` started as PID, its stderr in LOG, says it listens; if it exits first, prints its
# log and exits 1.
wait_for_server() {
  local log=$1 pid=$2
  for _ in $(seq 1 120); do
    grep -q "on http://" "$log" && return 0
    kill -0 "$pid" 2>/dev/null || { cat "$log" >&2; exit 1; }
    sleep 0.5
  done
  echo "$(basename "$0"): specd serve did not start within a minute" >&2
  exit 1
}
