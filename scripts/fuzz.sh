#!/usr/bin/env bash
# Builds the libFuzzer harnesses of the loaders (fuzz/) with clang, ASan and UBSan in build-fuzz/
# (or DIR) and runs each for N seconds (one per core at a time) on its seed corpus (fuzz/seeds/HARNESS, plus
# seeds made at run time from the project's files), keeping what it finds new in BUILD/corpus/HARNESS.
#   scripts/fuzz.sh [--seconds N] [--build DIR] [harness...]   (default 600 s each, every harness)
# --build DIR: a configured sanitizer build (clang, -DSPECD_SANITIZE=ON) holds the harnesses too,
# on its loaders (scripts/sanitize.sh passes build-sanitize); corpus, findings and logs go there.
# Exit 1 on any finding (crash, sanitizer report, an exception other than an input error, a
# timeout, memory beyond 2 GB); the input that caused it is in BUILD/findings/. Each clean
# run adds a line to BUILD/fuzz-history.tsv (date, harness, seconds, executions).
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=600
build=
harnesses=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds="$2"; shift 2 ;;
    --seconds=*) seconds="${1#*=}"; shift ;;
    --build) build="$2"; shift 2 ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    -*) echo "fuzz.sh: unknown option $1" >&2; exit 2 ;;
    *) harnesses+=("$1"); shift ;;
  esac
done
all=(config safetensors tokenizer tokenizer_encode workload manifest artifact_sqlite artifact_hdf5 traces openai_request)
[ ${#harnesses[@]} -eq 0 ] && harnesses=("${all[@]}")
for h in "${harnesses[@]}"; do
  [[ " ${all[*]} " == *" $h "* ]] || { echo "fuzz.sh: unknown harness $h (harnesses: ${all[*]})" >&2; exit 2; }
done

start=$(date +%s)
if [ -z "$build" ]; then
  build=build-fuzz
  CC=clang CXX=clang++ cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSPECD_FUZZ=ON -DSPECD_NATIVE=OFF >/dev/null
elif ! grep -q "^SPECD_SANITIZE:BOOL=ON" "$build/CMakeCache.txt" 2>/dev/null; then
  echo "fuzz.sh: --build $build: not a configured sanitizer build (clang, -DSPECD_SANITIZE=ON)" >&2
  exit 2
fi
cmake --build "$build" --target make_fuzz_seeds "${harnesses[@]/#/fuzz_}" -j"$(nproc)"
echo "fuzz.sh: built in $(( $(date +%s) - start )) s" >&2
"$build/fuzz/make_fuzz_seeds" "$build/seeds"

# ASan's defaults plus: report leaks (a loader that leaks on bad input is a finding too). Set
# whatever the caller exported (scripts/sanitize.sh exports the test suite's own): what counts as a
# finding, and the libhdf5 leak suppressed, are the harnesses' own.
export ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=1"
export UBSAN_OPTIONS="print_stacktrace=1"
export LSAN_OPTIONS="suppressions=$PWD/fuzz/lsan-suppressions.txt"
mkdir -p "$build/findings" "$build/logs"
# One harness: runs it, prints its line, leaves its exit status in logs/HARNESS.status.
fuzz_one() {
  local h=$1 corpus="$build/corpus/$1" log="$build/logs/$1.log" status execs
  local seeds=(fuzz/seeds/$h)
  mkdir -p "$corpus" "$build/seeds/$h"
  [ -d "${seeds[0]}" ] || seeds=()
  set +e
  "$build/fuzz/fuzz_$h" "$corpus" "${seeds[@]}" "$build/seeds/$h" -max_total_time="$seconds" -rss_limit_mb=2048 \
    -timeout=20 -max_len=65536 -print_final_stats=1 -artifact_prefix="$build/findings/$h-" >"$log" 2>&1
  status=$?
  set -e
  echo "$status" >"$build/logs/$h.status"
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n1)
  if [ $status -eq 0 ]; then
    printf '%s\t%s\t%s\t%s\n' "$(date -u +%FT%TZ)" "$h" "$seconds" "${execs:-0}" >>"$build/fuzz-history.tsv"
    echo "fuzz.sh: $h clean: ${seconds} s, ${execs:-?} executions, corpus $(ls "$corpus" | wc -l) inputs" >&2
  else
    echo "fuzz.sh: $h FOUND A PROBLEM (exit $status); log $log, input in $build/findings/:" >&2
    grep -E "ERROR|runtime error|Test unit written|==[0-9]+==|terminate|what\(\)" "$log" | head -n 15 >&2 || true
  fi
}
# The harnesses are single-threaded: one per core, each still fuzzed for the full N seconds.
parallel=$(nproc)
for h in "${harnesses[@]}"; do
  rm -f "$build/logs/$h.status"
  while [ "$(jobs -rp | wc -l)" -ge "$parallel" ]; do wait -n || true; done
  fuzz_one "$h" &
done
wait
failed=()
for h in "${harnesses[@]}"; do
  [ "$(cat "$build/logs/$h.status" 2>/dev/null)" = 0 ] || failed+=("$h")
done
echo "fuzz.sh: done in $(( $(date +%s) - start )) s" >&2
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz.sh: findings in: ${failed[*]}" >&2
  exit 1
fi
