#!/usr/bin/env bash
# Configures and builds specd in build/ (Release, Ninja, ccache when present).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${SPECD_BUILD_JOBS:-$(nproc)}
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DSPECD_WITH_TORCH=ON >/dev/null
cmake --build build -j "$jobs"
