#!/usr/bin/env bash
# The sanitizer jobs of scripts/test.sh (so of CI), one timing line per stage on stderr:
#   sanitize-build, sanitize-ctest: build-sanitize/, clang with AddressSanitizer and
#     UndefinedBehaviorSanitizer (any finding fails its test), -O0 -g1 (runtime/ at -O1), and
#     SPECD_NATIVE=OFF: the portable build (baseline x86-64; the kernels' scalar paths), so it is tested too, and its
#     ctest checks that specd holds no instruction past baseline x86-64 (tests/portable.cmake).
#     The demo workflow test is left out there (tests/workflow.cmake says why).
#   tsan-build, tsan-ctest: build-tsan/, the threads specd starts under ThreadSanitizer: the worker
#     pool and the matmul kernels that share work through it, the server's decoding thread, HTTP
#     handlers and drain (SPECD_TSAN=ON: the runtime and server only; tests/sanitizers/thread).
#   fuzz: scripts/fuzz.sh --seconds 15 --build build-sanitize (each loader's libFuzzer harness,
#     built with the sanitizer build on its loaders, which carry libFuzzer's coverage there).
# Run after scripts/setup.sh (clang and its sanitizer runtimes). Extra arguments go to ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/stage.sh
jobs=${SPECD_BUILD_JOBS:-$(nproc)}
supp=$PWD/tests/sanitizers

# The options every instrumented process gets, specd as ctest's tests spawn it included.
export ASAN_OPTIONS="detect_leaks=1:strict_init_order=1:check_initialization_order=1"
export LSAN_OPTIONS="suppressions=$supp/leak.supp:print_suppressions=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"

build_sanitize() {
  cmake -S . -B build-sanitize -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_COMPILER=clang++ \
    -DSPECD_SANITIZE=ON -DSPECD_NATIVE=OFF -DSPECD_WITH_TORCH=ON >/dev/null
  cmake --build build-sanitize -j "$jobs"
}
build_tsan() {
  # A build-tsan/ configured from another source folder (tests/sanitizers/thread alone, before) is
  # made afresh.
  if [ -f build-tsan/CMakeCache.txt ] && ! grep -qx "CMAKE_HOME_DIRECTORY:INTERNAL=$PWD" build-tsan/CMakeCache.txt; then
    rm -rf build-tsan
  fi
  cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_COMPILER=clang++ -DSPECD_TSAN=ON >/dev/null
  cmake --build build-tsan -j "$jobs" --target specd_test_thread_sanitizer
}

stage sanitize-build build_sanitize
# Left to the Release run, for paths that smaller tests run here too:
# - the distribution oracles: the sampled engine's chi-square tests (2,000 requests per method)
#   and the acceptors' (200,000 speculative steps per case), 15-90 s each under ASan, while the
#   acceptors' and the engine's other sampling tests run every rule here;
# - greedy identity with 16-bit KV caches, which repeats every method's decoding (~100 s under
#   ASan), while the forward oracles and kernel tests run the 16-bit cache paths here;
# - bench killed with SIGKILL at random points (~50 s under ASan): no sanitizer sees a process
#   killed, and `bench --resume` runs here in the test of its refusals;
# - `specd generate` on the large demo pair (~90 s under ASan): the same loader and engine the
#   small pair's tests run here, on a 37.5M-parameter model;
# - the live tokenizer cross-check against Hugging Face's library (label tokenizer-live, ~130 s of
#   test time under ASan): its ids do not depend on the build, and the golden tests (Qwen3's and
#   Mistral's real vocabularies) and the tokenizer fuzz harnesses run the same loader and BPE here.
stage sanitize-ctest ctest --test-dir build-sanitize --output-on-failure -j "$jobs" -LE tokenizer-live \
  -E "distributed as the target|commit the target|shape the target exactly|autoregressive tokens with 16-bit KV caches|bench --traces: killed with SIGKILL|uses the large demo pair by default" "$@"

stage tsan-build build_tsan
stage tsan-ctest ctest --test-dir build-tsan --output-on-failure -j "$jobs"

stage fuzz scripts/fuzz.sh --seconds 15 --build build-sanitize
