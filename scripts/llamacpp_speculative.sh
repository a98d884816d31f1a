#!/usr/bin/env bash
# specd's speculative decoding beside llama.cpp's on the large demo pair, same weights: both
# models converted to GGUF (BF16), the first prompt of every workload category decoded greedily
# for 128 tokens by `specd generate` (AR, and sd with the cost-aware budget) and by llama.cpp's
# `llama-speculative` (its defaults: up to 16 drafted tokens while the draft's top token has
# p >= 0.75; and --draft-max 4, specd's gamma), plus each engine's AR decode speed (`specd bench`,
# `llama-bench -p 0 -n 128`). Rounds interleave the engines: this machine is shared, so compare
# figures of one round. Decode speeds exclude the prompt's prefill in both engines.
#
# llama.cpp is not part of the project: build it outside, with llama-bench and llama-speculative
# (docs/benchmarks.md says how; the recipe's converter is hf2gguf.py), then
#   LLAMA_CPP_DIR=/path/to/llama.cpp RECIPE_DIR=/path/to/recipe scripts/llamacpp_speculative.sh
# Raw output: reports/bench/llamacpp-speculative.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${LLAMA_CPP_DIR:?set LLAMA_CPP_DIR to a llama.cpp tree built with llama-bench and llama-speculative}"
recipe=${RECIPE_DIR:?set RECIPE_DIR to the folder of the llama.cpp recipe (its convert script)}
specd=${SPECD:-build/cli/specd}
scratch=${SCRATCH:-build/bench-models}
rounds=${ROUNDS:-3}
threads=${THREADS:-2}
tokens=${TOKENS:-128}
out=${OUT:-reports/bench/llamacpp-speculative.txt}
target=data/models/demo-large-target
draft=data/models/demo-large-draft
bin=$LLAMA_CPP_DIR/build/bin
mkdir -p "$scratch/gguf-stubs" "$scratch/prompts" reports/bench
# gguf-py imports these at import time; the converter uses neither.
echo "class SentencePieceProcessor: pass" > "$scratch/gguf-stubs/sentencepiece.py"
touch "$scratch/gguf-stubs/yaml.py"
for model in "$target" "$draft"; do
  gguf=$scratch/$(basename "$model").gguf
  [ -f "$gguf" ] || LLAMA_CPP_DIR="$LLAMA_CPP_DIR" GGUF_STUBS="$scratch/gguf-stubs" /usr/bin/python3 \
    "$recipe/hf2gguf.py" "$model" "$gguf" bf16 --vocab-from "$model/tokenizer.json" >&2
done
target_gguf=$scratch/demo-large-target.gguf
draft_gguf=$scratch/demo-large-draft.gguf

# The first prompt of each category: its first turn, as specd encodes it (the tokenizer's BOS
# first; the GGUF's add_bos does the same for llama.cpp).
categories=()
for file in data/workloads/*.jsonl; do
  category=$(basename "$file" .jsonl)
  categories+=("$category")
  node -e 'const fs = require("fs"); const item = JSON.parse(fs.readFileSync(process.argv[1], "utf8").split("\n")[0]);
    process.stdout.write(item.turns ? item.turns[0] : item.prompt);' "$file" > "$scratch/prompts/$category.txt"
done

specd_decode() {  # decode tokens/s from the stats line
  "$specd" generate --model "$target" --draft "$draft" --workload "data/workloads/$1.jsonl" --prompt-index 0 \
    --max-new-tokens "$tokens" --threads "$threads" "${@:2}" 2>&1 >/dev/null | sed -n 's/.*decode: \([0-9.]*\) tokens\/s.*/\1/p'
}
llama_speculative() {  # decode tokens/s and acceptance
  "$bin/llama-speculative" -m "$target_gguf" -md "$draft_gguf" -f "$scratch/prompts/$1.txt" -n "$tokens" --temp 0 \
    -t "$threads" -td "$threads" -c 1024 --ignore-eos "${@:2}" 2>&1 |
    awk '/decoded/ {speed = $(NF-1)} /^accept|accept +=/ {gsub("%", "", $NF); accept = $NF} END {printf "%s (accept %s%%)", speed, accept}'
}

{
  echo "# $(date -u +%F) $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $threads threads; scripts/llamacpp_speculative.sh"
  echo "# greedy, $tokens new tokens after each category's first prompt; decode tokens/s (prefill excluded)"
  for round in $(seq "$rounds"); do
    echo "## round $round"
    specd_ar=$("$specd" bench --model "$target" --threads "$threads" --repeats 3 --new-tokens "$tokens" --json 2>/dev/null |
      node -e 'let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => console.log((1000 / JSON.parse(s).decode_ms_per_token).toFixed(1)))')
    llama_ar=$("$bin/llama-bench" -m "$target_gguf" -t "$threads" -p 0 -n "$tokens" -r 3 -o csv 2>/dev/null | tail -n1 |
      awk -F, '{gsub("\"", "", $(NF-1)); print $(NF-1)}')
    echo "AR decode (bench): specd $specd_ar tokens/s, llama.cpp $llama_ar tokens/s (llama-bench tg$tokens)"
    printf '%-14s %10s %10s %26s %26s\n' category "specd ar" "specd sd" "llama.cpp spec (default)" "llama.cpp spec (max 4)"
    for category in "${categories[@]}"; do
      printf '%-14s %10s %10s %26s %26s\n' "$category" "$(specd_decode "$category")" "$(specd_decode "$category" --method sd)" \
        "$(llama_speculative "$category")" "$(llama_speculative "$category" --draft-max 4)"
    done
  done
} | tee "$out"
