#!/usr/bin/env bash
# Sets up, builds and runs every test, one timing line per stage on stderr:
# the Release build and its ctest (Catch2, the live tokenizer cross-check against Hugging Face's
# own library, the demo workflow), then scripts/sanitize.sh (the portable build under ASan and
# UBSan and its ctest, the worker pool and the server's threads under ThreadSanitizer, a short fuzz run).
# Extra arguments go to both ctest runs (e.g. -R tokenizer).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/stage.sh
jobs=$(nproc)
stage setup scripts/setup.sh
stage build scripts/build.sh
stage ctest ctest --test-dir build --output-on-failure -j "$jobs" "$@"
scripts/sanitize.sh "$@"
echo "test.sh: every stage ok in $SECONDS s" >&2
