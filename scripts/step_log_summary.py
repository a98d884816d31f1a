#!/usr/bin/env python3
"""Where a server's decoding time went, from `specd serve --step-log FILE` (docs/serving.md, Load).
Per batch of methods (the methods of the step's requests, sorted) and guard arm: steps, committed
tokens per step and per ms of step time. Then the target forward's time of plain steps (every
request verifies one row, no prefill, no draft model in the step) by how many steps ago a draft
model last ran in that batch, leaving out the 3 steps around a prefill (a request arriving or
leaving: the client's and the HTTP threads' work shares the cores then): whether a draft model's
use slows the target's forwards after it. Then, per method run alone (every request of the step
the same method), how many steps held a prefill and their share of the time, and the plain steps'
forward by how far in time the nearest prefill is: a request arriving or leaving slows the steps
around it, and requests that finish at different times (as speculation's do) arrive apart, each
on its own step. Last, per method alone, those plain steps' forward by whether a prefill, and
whether a step that verified drafted rows, ran in the 8 steps before (on the Intel Xeon kind a big
forward leaves the target's next ones slower). Where the log has the batch planner's expectations
(its last four columns), the steps it sized, by whether a draft model ran: the time and tokens it
expected against what they took. With --last-tokens N, for each run of one method (steps of its
requests alone, up to the next method's), the steps that committed its last N tokens (a load
generator's cell of 8 clients: 8 x 8 requests x 64 tokens = 4096), by kind: where that cell's
time went, per method and the run's largest batch, summed over its runs; then the runs of the
largest batch in order, each with its full-batch plain steps' median forward (the machine's speed
from run to run).
  scripts/step_log_summary.py FILE [--last-tokens N]"""
import bisect
import math
import statistics
import sys
from collections import defaultdict

if len(sys.argv) not in (2, 4) or (len(sys.argv) == 4 and (sys.argv[2] != "--last-tokens" or not sys.argv[3].isdigit())):
    sys.exit(__doc__)
path = sys.argv[1]
last_tokens = int(sys.argv[3]) if len(sys.argv) == 4 else 0
steps = []
try:
    with open(path) as f:
        header = f.readline().rstrip("\n").split("\t")
        if header[:9] != ["time_s", "mix", "arm", "rows", "prefill", "tokens", "draft_ms", "forward_ms", "step_ms"]:
            sys.exit(f"{path}: not a specd serve step log (its first line is not the step log's header)")
        for number, line in enumerate(f, start=2):
            fields = line.rstrip("\n").split("\t")
            if len(fields) != len(header):
                sys.exit(f"{path}:{number}: expected {len(header)} tab-separated fields, found {len(fields)}")
            requests = [r.split(":") for r in fields[9].split()]
            steps.append({
                "time_s": float(fields[0]), "mix": fields[1], "arm": fields[2], "rows": int(fields[3]), "prefill": fields[4] == "1", "tokens": int(fields[5]),
                "draft_ms": float(fields[6]), "forward_ms": float(fields[7]), "step_ms": float(fields[8]),
                "methods": ",".join(sorted(r[0] for r in requests)), "batch": len(requests), "model": any(r[3] == "1" for r in requests),
                "plain": all(r[1] == "1" for r in requests),
                # The planner's expectation: tokens and ms as planned (0 where it did not size the step).
                "predicted": (float(fields[10]), float(fields[11])) if len(fields) > 10 else (0.0, 0.0),
            })
except OSError as e:
    sys.exit(f"{path}: {e.strerror}")
except (ValueError, IndexError):
    sys.exit(f"{path}:{number}: a field is not a number or a request is not method:rows:context:model")

print("| methods | arm | steps | rows/step | tokens/step | forward ms | step ms | tokens/ms |")
print("|---|---|---:|---:|---:|---:|---:|---:|")
groups = defaultdict(list)
for s in steps:
    if not s["prefill"]:
        groups[(s["methods"], s["arm"])].append(s)
for (methods, arm), group in sorted(groups.items()):
    if len(group) >= 20:
        tokens = sum(s["tokens"] for s in group)
        print(f"| {methods} | {arm} | {len(group)} | {statistics.mean(s['rows'] for s in group):.2f} | {tokens / len(group):.2f} | "
              f"{statistics.mean(s['forward_ms'] for s in group):.2f} | {statistics.mean(s['step_ms'] for s in group):.2f} | "
              f"{tokens / sum(s['step_ms'] for s in group):.3f} |")

print()
print("The drafting guard's plain arm: tokens per ms of step time within 32 target forwards of a draft model's last turn (any")
print("batch's) and after, per mix with 16 steps of each; pooled as the guard pools them (late over soon in logs, weighted by")
print("1 / (1/soon + 1/late)): over 1.03, the target slows after a draft model and off arms wait for it to recover")
print("| mix | soon steps | soon tokens/ms | late steps | late tokens/ms | late / soon |")
print("|---|---:|---:|---:|---:|---:|")
pace = defaultdict(lambda: {"soon": [0, 0.0, 0], "late": [0, 0.0, 0]})  # tokens, ms, steps
since = None
for s in steps:
    since = 0 if s["model"] else (None if since is None else since + 1)
    if s["prefill"] or s["arm"] != "plain" or s["mix"] == "-":
        continue
    kind = pace[s["mix"]]["soon" if since is not None and since <= 32 else "late"]
    kind[0] += s["tokens"]
    kind[1] += s["step_ms"]
    kind[2] += 1
log_sum = weight = 0.0
for mix, kinds in sorted(pace.items(), key=lambda kv: (kv[0].split(",")[0], kv[0].count(","))):
    soon, late = kinds["soon"], kinds["late"]
    if soon[2] < 16 or late[2] < 16 or soon[0] == 0 or late[0] == 0:
        continue
    ratio = (late[0] / late[1]) / (soon[0] / soon[1])
    w = 1 / (1 / soon[2] + 1 / late[2])
    log_sum += w * math.log(ratio)
    weight += w
    print(f"| {mix} | {soon[2]} | {soon[0] / soon[1]:.3f} | {late[2]} | {late[0] / late[1]:.3f} | {ratio:.3f} |")
if weight:
    print(f"| pooled | | | | | {math.exp(log_sum / weight):.3f} |")

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

print()
print("Per method alone: steps with a prefill and their share of the time; plain steps' target forward at the method's largest")
print("batch (ms, mean / median (steps)) by the time to the nearest prefill")
near_bins = [(0, 10), (10, 30), (30, 60), (60, 120), (120, None)]
near_labels = [f"{lo}+ ms" if hi is None else f"{lo}-{hi} ms" for lo, hi in near_bins]
print("| method | steps | with a prefill | their share of the time | batch | " + " | ".join(near_labels) + " |")
print("|---|---:|---:|---:|---:|" + "---:|" * len(near_bins))
prefill_times = [s["time_s"] for s in steps if s["prefill"]]
alone = defaultdict(list)
for s in steps:
    if len(set(s["methods"].split(","))) == 1:
        alone[s["methods"].split(",")[0]].append(s)
for method, group in sorted(alone.items()):
    near = defaultdict(list)
    batch = max(s["batch"] for s in group)
    for s in group:
        if s["prefill"] or not s["plain"] or s["model"] or s["batch"] != batch:
            continue
        i = bisect.bisect_left(prefill_times, s["time_s"])
        ms = min(abs(s["time_s"] - prefill_times[j]) for j in (i - 1, i) if 0 <= j < len(prefill_times)) * 1000
        near[next(n for n, (lo, hi) in enumerate(near_bins) if ms >= lo and (hi is None or ms < hi))].append(s["forward_ms"])
    cells = [f"{statistics.mean(near[n]):.2f} / {statistics.median(near[n]):.2f} ({len(near[n])})" if len(near[n]) >= 5 else "-"
             for n in range(len(near_bins))]
    with_prefill = [s for s in group if s["prefill"]]
    share = sum(s["step_ms"] for s in with_prefill) / sum(s["step_ms"] for s in group)
    print(f"| {method} | {len(group)} | {len(with_prefill)} | {share:.1%} | {batch} | " + " | ".join(cells) + " |")

print()
print("Per method alone, plain steps' target forward at the method's largest batch (ms, median (steps)) by whether a prefill, and")
print("whether a step that verified drafted rows, ran in the 8 steps before: whether big forwards slow the target's next ones")
after = ["neither", "a prefill", "drafted rows", "both"]
print("| method | batch | " + " | ".join(after) + " |")
print("|---|---:|" + "---:|" * len(after))
for method, group in sorted(alone.items()):
    batch = max(s["batch"] for s in group)
    cells = defaultdict(list)
    last_prefill = last_drafted = None
    for i, s in enumerate(steps):
        if s["methods"].split(",")[0] == method and len(set(s["methods"].split(","))) == 1 and s["batch"] == batch and not s["prefill"] \
                and s["plain"] and not s["model"]:
            recent_prefill = last_prefill is not None and i - last_prefill <= 8
            recent_drafted = last_drafted is not None and i - last_drafted <= 8
            cells[2 * recent_drafted + recent_prefill].append(s["forward_ms"])
        if s["prefill"]:
            last_prefill = i
        elif not s["plain"]:
            last_drafted = i
    print(f"| {method} | {batch} | " + " | ".join(f"{statistics.median(cells[n]):.2f} ({len(cells[n])})" if len(cells[n]) >= 5 else "-"
                                                for n in range(len(after))) + " |")

sized = defaultdict(list)
for s in steps:
    if not s["prefill"] and s["predicted"][1] > 0:
        sized[(s["methods"], s["draft_ms"] > 0)].append(s)
if sized:
    print()
    print("Steps the batch planner sized: what it expected against what they took (means)")
    print("| methods | draft model ran | steps | rows/step | expected ms | step ms | expected tokens | tokens |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for (methods, model), group in sorted(sized.items()):
        if len(group) >= 20:
            print(f"| {methods} | {'yes' if model else 'no'} | {len(group)} | {statistics.mean(s['rows'] for s in group):.2f} | "
                  f"{statistics.mean(s['predicted'][1] for s in group):.2f} | {statistics.mean(s['step_ms'] for s in group):.2f} | "
                  f"{statistics.mean(s['predicted'][0] for s in group):.2f} | {statistics.mean(s['tokens'] for s in group):.2f} |")

if last_tokens:
    print()
    print(f"The last {last_tokens} tokens of each run of one method: its steps by kind, summed over the method's runs (wall: first step's start")
    print("to the last step's end; idle: wall not in any step; forward and drafting per step)")
    print("| method | largest batch | runs | wall ms | idle ms | kind | steps | requests/step | rows/step | forward ms | drafting ms | step ms | time ms | tokens | tokens/ms |")
    print("|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    runs, run = [], []
    for s in steps:
        if s["batch"] == 0 or len(set(s["methods"].split(","))) != 1:
            continue
        if run and s["methods"].split(",")[0] != run[-1]["methods"].split(",")[0]:
            runs.append(run)
            run = []
        run.append(s)
    if run:
        runs.append(run)
    kinds = ["prefill", "drafted", "plain, full batch", "plain, fewer"]
    cells = defaultdict(lambda: {"runs": 0, "wall": 0.0, "busy": 0.0, "kinds": defaultdict(list)})
    in_order = []  # each run's method and its full-batch plain steps' median forward
    for run in runs:
        committed, first = 0, len(run)
        while first > 0 and committed < last_tokens:
            first -= 1
            committed += run[first]["tokens"]
        part = run[first:]
        full = max(s["batch"] for s in part)
        cell = cells[(part[0]["methods"].split(",")[0], full)]
        cell["runs"] += 1
        # a step is logged as it ends: from the first step's start to the last one's end
        cell["wall"] += (part[-1]["time_s"] - part[0]["time_s"]) * 1000 + part[0]["step_ms"]
        for s in part:
            cell["busy"] += s["step_ms"]
            kind = 0 if s["prefill"] else 1 if s["draft_ms"] > 0 else 2 if s["batch"] == full else 3
            cell["kinds"][kind].append(s)
        plain = [s["forward_ms"] for s in part if not s["prefill"] and s["draft_ms"] == 0 and s["batch"] == full]
        in_order.append((full, f"{part[0]['methods'].split(',')[0]} {statistics.median(plain):.2f}" if plain else f"{part[0]['methods'].split(',')[0]} -"))
    for (method, full), cell in sorted(cells.items()):
        for kind, group in sorted(cell["kinds"].items()):
            ms = sum(s["step_ms"] for s in group)
            tokens = sum(s["tokens"] for s in group)
            print(f"| {method} | {full} | {cell['runs']} | {cell['wall']:.0f} | {cell['wall'] - cell['busy']:.0f} | {kinds[kind]} | {len(group)} | "
                  f"{statistics.mean(s['batch'] for s in group):.1f} | {statistics.mean(s['rows'] for s in group):.1f} | "
                  f"{statistics.mean(s['forward_ms'] for s in group):.2f} | {statistics.mean(s['draft_ms'] for s in group):.2f} | "
                  f"{ms / len(group):.2f} | {ms:.0f} | {tokens} | {tokens / ms:.3f} |")
    print()
    largest = max(full for full, _ in in_order)
    in_order = [text for full, text in in_order if full == largest]
    print(f"The runs of {largest} requests in the order they ran: the method and the median forward (ms) of its full-batch steps")
    print("with no draft model (retrieved rows included): how the machine's speed moved from run to run")
    for i in range(0, len(in_order), 8):
        print(", ".join(in_order[i:i + 8]))
