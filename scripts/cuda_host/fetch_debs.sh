#!/usr/bin/env bash
# Downloads, on a Debian 12 host (apt only, no install), the packages a GPU machine without Debian
# needs to build specd beside its own CUDA libtorch (docs/benchmarks.md, On a GPU): Boost 1.74 and
# Catch2 2 (the image's are other versions), cpp-httplib, utf8proc, PCRE2, brotli and SQLite with
# their runtime libraries. FALLBACKS=1 adds what such an image usually has already (nlohmann-json,
# Eigen, OpenSSL, zlib, HDF5, pkg-config); device_env.sh unpacks those only where it lacks them.
# Writes .gpu/debs (git-ignored, about 14 MiB; 30 with the fallbacks). Then, with the lent machine:
#   run: STEPS="1 2 3 4" bash scripts/cuda_host/device_env.sh scripts/cuda_check.sh /tmp/cuda
#   carry: .gpu and analysis/charts/node_modules/{vega,vega-lite}/{package.json,build/*.min.js}
# (the build embeds the two chart scripts; the call carries at most 64 MiB, so move the large
# pair's weights out of the tree for the call).
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p .gpu/debs
cd .gpu/debs
pkgs=(libboost1.74-dev libboost-program-options1.74-dev libboost-program-options1.74.0 catch2
  libcpp-httplib-dev libcpp-httplib0.11 libutf8proc-dev libutf8proc2 libpcre2-dev libpcre2-8-0
  libbrotli-dev libbrotli1 libsqlite3-dev libsqlite3-0)
if [ "${FALLBACKS:-0}" = 1 ]; then
  pkgs+=(pkgconf pkgconf-bin libpkgconf3 nlohmann-json3-dev libeigen3-dev libssl-dev zlib1g-dev
    libhdf5-dev libhdf5-103-1 libsz2 libaec0)
fi
apt-get download "${pkgs[@]}" > /dev/null
echo "fetch_debs: ${#pkgs[@]} packages in .gpu/debs ($(du -sh . | cut -f1))"
