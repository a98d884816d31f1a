# Greedy samples of a trained target for its model card: write_samples SPECD MODEL THREADS OUT
# writes one JSON string per prompt (prompt + 80 greedy tokens) to OUT. Sourced by the training
# scripts.
write_samples() {
  local specd=$1 model=$2 threads=$3 out=$4 prompt continuation
  local prompts=("import os
import sys


def main():
" "The Debian package management system" "The :mod:\`json\` module")
  : > "$out"
  for prompt in "${prompts[@]}"; do
    continuation=$("$specd" generate --model "$model" --prompt "$prompt" --max-new-tokens 80 --threads "$threads" 2>/dev/null)
    printf '%s\n' "$prompt$continuation" | node -e '
      const text = require("fs").readFileSync(0, "utf8");
      process.stdout.write(JSON.stringify(text.replace(/\n$/, "")) + "\n");' >> "$out"
  done
}
