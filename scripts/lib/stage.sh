# Sourced by scripts/test.sh and scripts/sanitize.sh: `stage NAME COMMAND...` runs COMMAND and
# prints one timing line on stderr, "stage NAME: ok in 123 s" (or "FAILED (exit N) after ...",
# then exits with COMMAND's status), so CI logs show where the time goes.
stage() {
  local name=$1 start status=0
  shift
  start=$(date +%s)
  "$@" || status=$?
  if [ "$status" -eq 0 ]; then
    echo "stage $name: ok in $(($(date +%s) - start)) s" >&2
  else
    echo "stage $name: FAILED (exit $status) after $(($(date +%s) - start)) s" >&2
    exit "$status"
  fi
}
