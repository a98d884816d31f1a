#!/usr/bin/env bash
# The CPU kernels before and after a change: the forward of n new tokens on 64 cached
# (`specd bench --forward-sizes`; n = 1 is a decoding step, 2-16 a verification, 64 a prefill
# chunk), ms for each binary given, in rounds that take turns so that a busy spell of the shared
# machine hits every binary alike; last, each size's median over the rounds.
#   scripts/kernel_ab.sh OLD NEW [...]   (MODELS: default the two demo targets; ROUNDS: default 5;
#   SIZES: default 1 2 4 8 16 64;
#   each binary is named in the output as given: give paths relative to the repository)
#   KERNELS="dot widened amx" scripts/kernel_ab.sh build/cli/specd   (one binary under each BF16
#   kernel, SPECD_BF16_KERNEL; named BINARY[kernel])
# Raw output: reports/bench/kernel-ab.txt (OUT to change). Run on a quiet machine.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/machine_stamp.sh
[ $# -ge 1 ] || { echo "usage: scripts/kernel_ab.sh SPECD [SPECD...]" >&2; exit 2; }
out=${OUT:-reports/bench/kernel-ab.txt}
rounds=${ROUNDS:-5}
models=(${MODELS:-data/models/demo-target data/models/demo-large-target})
sizes=(${SIZES:-1 2 4 8 16 64})
kernels=(${KERNELS:-})
forward_ms() {  # the sizes' ms, space-separated; $3: the BF16 kernel, or empty for the binary's choice
  SPECD_BF16_KERNEL=$3 "$1" bench --model "$2" --threads 2 --repeats 10 --prompt-lengths 1 --new-tokens 2 --forward-sizes "${sizes[@]}" --json 2>/dev/null |
    node -e 'let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => console.log(JSON.parse(s).forward.map((f) => f.ms.toFixed(3)).join(" ")))'
}
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
{
  machine_stamp
  echo "# ms of a forward of n new tokens on 64 cached (specd bench, median of 10), 2 threads; n = ${sizes[*]}"
  for round in $(seq "$rounds"); do
    for model in "${models[@]}"; do
      for bin in "$@"; do
        for kernel in "${kernels[@]:-}"; do
          line="$(basename "$model") $bin${kernel:+[$kernel]} $(forward_ms "$bin" "$model" "$kernel")"
          echo "$line" >> "$tmp"
          echo "round $round  $line"
        done
      done
    done
  done
  echo "# median over the rounds (ms), and t(n)/t(1)"
  sort -k1,2 "$tmp" | awk -v n="${#sizes[@]}" -v sizes="${sizes[*]}" '
    function flush(   i, j, k, m, v, a, line) {
      if (key == "") return
      line = key
      for (i = 1; i <= n; ++i) {
        for (j = 1; j <= count; ++j) a[j] = ms[j, i]
        for (j = 2; j <= count; ++j) { v = a[j]; for (k = j - 1; k >= 1 && a[k] > v; --k) a[k + 1] = a[k]; a[k + 1] = v }
        m[i] = count % 2 ? a[(count + 1) / 2] : (a[count / 2] + a[count / 2 + 1]) / 2
        line = line sprintf("  n=%s %.3f (%.2fx)", size[i], m[i], m[i] / m[1])
      }
      print line
    }
    BEGIN { split(sizes, size, " ") }
    { k = $1 " " $2; if (k != key) { flush(); key = k; count = 0 } ++count; for (i = 1; i <= n; ++i) ms[count, i] = $(i + 2) }
    END { flush() }'
} | tee "$out"
