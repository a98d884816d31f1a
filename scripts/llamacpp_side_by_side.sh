#!/usr/bin/env bash
# specd beside llama.cpp on this machine: the same random weights (init-model shape c, F32 and
# BF16, and the demo target), converted to GGUF, decode and forward times and peak RSS of both,
# in interleaved rounds (this machine is shared: compare figures of the same round).
#
# llama.cpp is not part of the project: build it outside, with llama-bench and the lctool harness
# for forwards of n tokens on a warm cache, timed as specd bench times them (docs/benchmarks.md
# says how), then
#   LLAMA_CPP_DIR=/path/to/llama.cpp LCTOOL=/path/to/lctool RECIPE_DIR=/path/to/recipe scripts/llamacpp_side_by_side.sh
# Raw output: reports/bench/llamacpp-side-by-side.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${LLAMA_CPP_DIR:?set LLAMA_CPP_DIR to a llama.cpp tree built with llama-bench}"
: "${LCTOOL:?set LCTOOL to the lctool binary of the recipe}"
recipe=${RECIPE_DIR:?set RECIPE_DIR to the folder of the llama.cpp recipe (its convert and lctool sources)}
specd=build/cli/specd
scratch=${SCRATCH:-build/bench-models}
rounds=${ROUNDS:-3}
threads=${THREADS:-2}
out=reports/bench/llamacpp-side-by-side.txt
mkdir -p "$scratch/gguf-stubs" reports/bench
# gguf-py imports these at import time; the converter uses neither.
echo "class SentencePieceProcessor: pass" > "$scratch/gguf-stubs/sentencepiece.py"
touch "$scratch/gguf-stubs/yaml.py"

# name, Hugging Face directory, GGUF type
models=("shape-c-f32 $scratch/shape-c-f32 f32" "shape-c-bf16 $scratch/shape-c-bf16 bf16" "demo-target data/models/demo-target bf16")
for entry in "${models[@]}"; do
  read -r name dir type <<< "$entry"
  shape=${name#shape-}; shape=${shape%%-*}
  [ -f "$dir/config.json" ] || "$specd" init-model --out "$dir" --shape "$shape" --dtype "$type"
  [ -f "$scratch/$name.gguf" ] || LLAMA_CPP_DIR="$LLAMA_CPP_DIR" GGUF_STUBS="$scratch/gguf-stubs" /usr/bin/python3 \
    "$recipe/hf2gguf.py" "$dir" "$scratch/$name.gguf" "$type" --vocab-from data/models/demo-target/tokenizer.json >&2
done

{
  echo "# $(date -u +%F) $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $threads threads"
  echo "# decode: 64 tokens after a 64-token prompt; fwd n: one forward of n tokens on 64 cached, all logits (ms, medians)"
  for round in $(seq "$rounds"); do
    for entry in "${models[@]}"; do
      read -r name dir type <<< "$entry"
      gguf=$scratch/$name.gguf
      echo "## round $round: $name"
      "$specd" bench --model "$dir" --threads "$threads" --repeats 5 --prompt-lengths 64 --new-tokens 64 --prefix 64 \
        --forward-sizes 1 8 32 --json 2>/dev/null | /usr/bin/python3 -c '
import json, sys
r = json.load(sys.stdin)
fwd = " ".join("fwd%d %.3f" % (f["tokens"], f["ms"]) for f in r["forward"])
print("specd     decode %.3f ms/token  %s ms  peak RSS %.1f MiB (KV %s)" % (r["decode_ms_per_token"], fwd, r["peak_rss_mib"], r["kv_dtype"]))'
      line="llama.cpp decode $("$LCTOOL" dec "$gguf" "$threads" 64 64 5 | sed 's/.*median \([0-9.]*\) ms.*/\1/') ms/token "
      for n in 1 8 32; do line+=" fwd$n $("$LCTOOL" fwd "$gguf" "$threads" 64 "$n" 5 all | sed 's/.*median \([0-9.]*\) ms.*/\1/')"; done
      # Peak RSS of llama-bench generating 64 tokens (F16 KV cache, its default), KiB -> MiB.
      rss=$( { /usr/bin/time -f "%M" "$LLAMA_CPP_DIR/build/bin/llama-bench" -m "$gguf" -t "$threads" -p 0 -n 64 -r 3 >/dev/null; } 2>&1 | tail -n1)
      echo "$line ms  peak RSS $(awk "BEGIN {printf \"%.1f\", $rss / 1024}") MiB (llama-bench -p 0 -n 64, KV f16)"
    done
  done
} | tee "$out"
