#!/usr/bin/env python3
"""Where a server's decoding time went, from `specd serve --step-log FILE` (docs/serving.md, Load).
Per batch of methods (the methods of the step's requests, sorted) and guard arm: steps, committed
tokens per step and per ms of step time. Then the target forward's time of plain steps (every
request verifies one row, no prefill, no draft model in the step) by how many steps ago a draft
model last ran in that batch, leaving out the 3 steps around a prefill (a request arriving or
leaving: the client's and the HTTP threads' work shares the cores then): whether a draft model's
use slows the target's forwards after it.
  scripts/step_log_summary.py FILE"""
import statistics
import sys
from collections import defaultdict

if len(sys.argv) != 2:
    sys.exit(__doc__)
path = sys.argv[1]
steps = []
try:
    with open(path) as f:
        header = f.readline().rstrip("\n").split("\t")
        if header[:9] != ["time_s", "mix", "arm", "rows", "prefill", "tokens", "draft_ms", "forward_ms", "step_ms"]:
            sys.exit(f"{path}: not a specd serve step log (its first line is not the step log's header)")
        for number, line in enumerate(f, start=2):
            fields = line.rstrip("\n").split("\t")
            if len(fields) != 10:
                sys.exit(f"{path}:{number}: expected 10 tab-separated fields, found {len(fields)}")
            requests = [r.split(":") for r in fields[9].split()]
            steps.append({
                "arm": fields[2], "rows": int(fields[3]), "prefill": fields[4] == "1", "tokens": int(fields[5]),
                "draft_ms": float(fields[6]), "forward_ms": float(fields[7]), "step_ms": float(fields[8]),
                "methods": ",".join(sorted(r[0] for r in requests)), "model": any(r[3] == "1" for r in requests),
                "plain": all(r[1] == "1" for r in requests),
            })
except OSError as e:
    sys.exit(f"{path}: {e.strerror}")
except (ValueError, IndexError):
    sys.exit(f"{path}:{number}: a field is not a number or a request is not method:rows:context:model")

print("| methods | arm | steps | tokens/step | tokens/ms |")
print("|---|---|---:|---:|---:|")
groups = defaultdict(list)
for s in steps:
    if not s["prefill"]:
        groups[(s["methods"], s["arm"])].append(s)
for (methods, arm), group in sorted(groups.items()):
    if len(group) >= 20:
        tokens = sum(s["tokens"] for s in group)
        print(f"| {methods} | {arm} | {len(group)} | {tokens / len(group):.2f} | {tokens / sum(s['step_ms'] for s in group):.3f} |")

print()
print("Plain steps' target forward, ms, by steps since a draft model last ran in the batch (3 steps around a prefill left out)")
print("| methods | since the draft model | steps | mean | median |")
print("|---|---|---:|---:|---:|")
bins = [(1, 4), (5, 8), (9, 16), (17, 32), (33, None)]
prefills = {i for i, s in enumerate(steps) if s["prefill"]}
by = defaultdict(list)
last = {}  # methods -> index of the last step whose draft model ran
for i, s in enumerate(steps):
    if s["model"]:
        last[s["methods"]] = i
    if s["prefill"] or s["model"] or not s["plain"] or any(j in prefills for j in range(i - 3, i + 4)):
        continue
    since = i - last[s["methods"]] if s["methods"] in last else None
    label = "never" if since is None else next(f"{lo}+" if hi is None else f"{lo}-{hi}" for lo, hi in bins if since >= lo and (hi is None or since <= hi))
    by[(s["methods"], label)].append(s["forward_ms"])
order = {f"{lo}+" if hi is None else f"{lo}-{hi}": n for n, (lo, hi) in enumerate(bins)}
order["never"] = len(bins)
for (methods, label), times in sorted(by.items(), key=lambda kv: (kv[0][0], order[kv[0][1]])):
    if len(times) >= 5:
        print(f"| {methods} | {label} | {len(times)} | {statistics.mean(times):.2f} | {statistics.median(times):.2f} |")
