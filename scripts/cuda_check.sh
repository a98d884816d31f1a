#!/usr/bin/env bash
# The CUDA path on a machine with an NVIDIA GPU and a CUDA build of libtorch (PyTorch's own, found
# through `python3 -c "import torch"` unless TORCH_PREFIX names another), besides the Debian
# packages scripts/setup.sh installs. Builds specd with the ATen backend in build-cuda/, then:
#   1. the forward oracles on CUDA: the ATen forward on the GPU against the CPU kernels, and the
#      exact oracles (incremental = full, tree = chains, commit_path, truncate) on the GPU, in one
#      process (after a crash, each test case again in its own);
#   2. greedy text of the demo target, CPU kernels against CUDA;
#   3. the forward's cost by row count, and every lossless method against AR on the small demo pair
#      (auto and fixed draft budgets), on the GPU;
#   4. calibrations on the GPU writing one artifact (an atomic directory) three times, then verify;
#   5. specd serve on the GPU: greedy answers of every lossless method against `specd generate`'s,
#      and aggregate tokens/s at 1 and 4 concurrent clients, SERVE_ROUNDS rounds of 16 requests per
#      method in which the methods take turns (a stdlib Python client: the image has python3 for
#      torch, not node).
# Usage: [CMAKE_ARGS=...] [STEPS="1 2 3 4 5"] [MAX_PROMPTS=4] [METHOD_REPEATS=3] [SERVE_ROUNDS=5] scripts/cuda_check.sh [OUT_DIR]
# (default reports/cuda/<GPU model>, e.g. reports/cuda/h200; CMAKE_ARGS go to the configure step). Everything it prints goes to
# OUT_DIR/cuda-check.txt as well; the bench tables also as JSON.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-reports/cuda/$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1 | awk '{print tolower($2)}')}
mkdir -p "$out"
exec > >(tee "$out/cuda-check.txt") 2>&1

steps=${STEPS:-1 2 3 4 5}
want() { [[ " $steps " == *" $1 "* ]]; }
prefix=${TORCH_PREFIX:-$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')}
echo "== machine"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
lscpu | grep -m1 "Model name"
python3 -c 'import torch; print("libtorch", torch.__version__, "CUDA", torch.version.cuda)' 2>/dev/null || true

echo "== build (build-cuda, libtorch from ${prefix/#*site-packages/<site-packages>})"
start=$SECONDS
cmake -S . -B build-cuda -G Ninja -DCMAKE_BUILD_TYPE=Release -DSPECD_WITH_TORCH=ON -DCMAKE_PREFIX_PATH="$prefix" ${CMAKE_ARGS:-} \
  > "$out/configure.txt" 2>&1 || { grep -A12 "CMake Error" "$out/configure.txt"; exit 1; }
# -k 0: every compile error in one run.
targets=(specd specd-aten); if want 1; then targets+=(specd_test_model); fi
cmake --build build-cuda --target "${targets[@]}" -j "$(nproc)" -- -k 0 > "$out/build.txt" 2>&1 ||
  { grep -E -A3 "error|FAILED" "$out/build.txt" | head -n 80; exit 1; }
echo "built in $((SECONDS - start)) s"
specd=build-cuda/cli/specd
t=data/models/demo-target
d=data/models/demo-draft

if want 1; then
  echo "== 1. forward oracles on CUDA"
  tests=build-cuda/tests/specd_test_model
  SPECD_TEST_CUDA=1 "$tests" "[cuda],[oracle],[kv]" --reporter compact > "$out/oracles.txt" 2>&1 && rc=0 || rc=$?
  grep -E "failed|^(Passed|Failed|All)" "$out/oracles.txt" | tail -n 20 || true
  echo "rc=$rc"
  if [ "$rc" -gt 128 ]; then
    # A crash ends the run at one test case; each alone shows what else passes.
    echo "-- crashed: each test case alone"
    "$tests" "[cuda],[oracle],[kv]" --list-test-names-only | grep -v "^$" > "$out/oracle-names.txt"
    while IFS= read -r name; do
      # Catch reads commas in a name as separators.
      SPECD_TEST_CUDA=1 "$tests" "${name//,/\\,}" --reporter compact > "$out/oracle-one.txt" 2>&1 && rc=0 || rc=$?
      echo "rc=$rc  $name :: $(grep -E "^(Passed|Failed|All)" "$out/oracle-one.txt" | tail -n 1)"
      [ "$rc" -eq 0 ] || grep -E "failed" "$out/oracle-one.txt" | head -n 3
    done < "$out/oracle-names.txt"
    rm -f "$out/oracle-names.txt" "$out/oracle-one.txt"
  fi
fi

if want 2; then
  echo "== 2. greedy text, CPU kernels (float32 activations) against CUDA"
  same=0
  for w in code_editing qa summarization translation; do
    for i in 0 1; do
      args=(--model $t --workload data/workloads/$w.jsonl --prompt-index $i --max-new-tokens 64)
      if [ "$("$specd" generate "${args[@]}" --fp32-activations)" = "$("$specd" generate "${args[@]}" --device cuda)" ]; then
        same=$((same + 1))
      else
        echo "$w prompt $i differs"
      fi
    done
  done
  echo "greedy text equal on $same of 8 prompts"
fi

if want 3; then
  echo "== 3. on the GPU: the forward's cost by new-token count, and the methods against AR"
  "$specd" bench --model $t --device cuda --forward-sizes 1 2 4 8 16 32 --repeats 20
  for budget in auto fixed; do
    echo "-- draft budget $budget"
    "$specd" bench --model $t --draft $d --device cuda --methods sd,sd-tree,pld,sam --draft-budget $budget \
      --max-prompts "${MAX_PROMPTS:-4}" --repeats "${METHOD_REPEATS:-3}" --json "$out/methods-$budget.json"
  done
fi

if want 4; then
  echo "== 4. calibrations on the GPU write an artifact, then replace it (its old contents removed), then verify"
  scratch=$(mktemp -d)
  pair=(--target $t --draft $d --device cuda --max-prompts 4)
  "$specd" calibrate sam-corpus "${pair[@]}" --out "$scratch/artifact"
  "$specd" calibrate csd "${pair[@]}" --out "$scratch/artifact"
  "$specd" calibrate csd "${pair[@]}" --out "$scratch/artifact"
  "$specd" artifact verify "$scratch/artifact" --target $t --draft $d
  echo "temporary directories left beside it: $(find "$scratch" -mindepth 1 -maxdepth 1 -name "artifact.tmp-*" | wc -l)"
  rm -rf "$scratch"
fi

if want 5; then
  echo "== 5. specd serve on the GPU: greedy answers against generate's, tokens/s at 1 and 4 clients"
  scratch=$(mktemp -d)
  source scripts/lib/serve_wait.sh
  "$specd" serve --model $t --draft $d --device cuda --port 0 --parallel 4 --max-tokens 64 2> "$scratch/serve.log" &
  server=$!
  wait_for_server "$scratch/serve.log" $server
  grep "on http://" "$scratch/serve.log"
  for i in 0 1 2 3; do
    "$specd" generate --model $t --device cuda --workload data/workloads/qa.jsonl --prompt-index $i --max-new-tokens 64 \
      > "$scratch/generate-$i.txt" 2> /dev/null
  done
  python3 - "$(grep -o "http://[0-9.]*:[0-9]*" "$scratch/serve.log" | head -n 1)" "$scratch" "${SERVE_ROUNDS:-5}" <<'EOF'
import json, math, statistics, sys, time, urllib.request
from concurrent.futures import ThreadPoolExecutor
url, scratch = sys.argv[1], sys.argv[2]
prompts = [json.loads(line)["prompt"] for line in open("data/workloads/qa.jsonl") if line.strip()][:4]
def complete(prompt, method):
    body = {"prompt": prompt, "max_tokens": 64, "temperature": 0, "speculative": {"method": method}}
    request = urllib.request.Request(url + "/v1/completions", json.dumps(body).encode(), {"Content-Type": "application/json"})
    with urllib.request.urlopen(request) as response:
        answer = json.load(response)
    return answer["choices"][0]["text"], answer["usage"]["completion_tokens"]
rounds = int(sys.argv[3])
methods = ("ar", "sd", "pld", "sam")
print(f"method  clients  requests  tokens/s  vs ar  (geometric mean of {rounds} rounds' ratios; min-max)  greedy = generate")
for clients in (1, 4):
    rates = {m: [] for m in methods}
    same = {m: 0 for m in methods}
    for r in range(rounds):
        # The methods take turns going first: a run right after another is not favoured.
        for method in methods[r % len(methods):] + methods[:r % len(methods)]:
            jobs = [(i % len(prompts), prompts[i % len(prompts)]) for i in range(16)]
            start = time.perf_counter()
            with ThreadPoolExecutor(max_workers=clients) as pool:
                answers = list(pool.map(lambda job: (job[0],) + complete(job[1], method), jobs))
            seconds = time.perf_counter() - start
            rates[method].append(sum(tokens for _, _, tokens in answers) / seconds)
            same[method] += sum(text.rstrip("\n") == open(f"{scratch}/generate-{k}.txt").read().rstrip("\n") for k, text, _ in answers)
    for method in methods:
        ratios = [m / a for m, a in zip(rates[method], rates["ar"])]
        mean = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
        print(f"{method:6}  {clients:7}  {16 * rounds:8}  {statistics.median(rates[method]):8.1f}  {mean:4.2f}x  ({min(ratios):.2f}-{max(ratios):.2f})  "
              f"{same[method]}/{16 * rounds}")
EOF
  kill -TERM $server; wait $server || true
  rm -rf "$scratch"
fi
