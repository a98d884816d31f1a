#!/usr/bin/env bash
# Sets up, builds and runs every test (Catch2 through ctest, including the live tokenizer
# cross-check against Hugging Face's own library).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
cd build
ctest --output-on-failure -j "$(nproc)" "$@"
