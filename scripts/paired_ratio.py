#!/usr/bin/env python3
"""Paired speedup of one method over another from a bench's traces: per prompt, the ratio of the two
methods' speedups over AR (each the mean over that prompt's repeats, from requests.measurement),
then the mean over prompts with the half-width of its 95% normal interval.
  scripts/paired_ratio.py TRACES.sqlite METHOD BASELINE"""
import json
import math
import sqlite3
import statistics
import sys

if len(sys.argv) != 4:
    sys.exit(__doc__)
path, method, baseline = sys.argv[1:]
db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
runs = {name: run for run, name in db.execute("SELECT id, method FROM runs")}
for name in (method, baseline):
    if name not in runs:
        sys.exit(f"{path}: no run of {name} (runs: {', '.join(sorted(runs))})")


def speedups(name):
    per_prompt = {}
    for workload, measurement in db.execute("SELECT workload, measurement FROM requests WHERE run_id = ?", (runs[name],)):
        per_prompt.setdefault(workload, []).append(json.loads(measurement)["speedup"][1])
    return {w: statistics.mean(v) for w, v in per_prompt.items()}


a, b = speedups(method), speedups(baseline)
ratios = [a[w] / b[w] for w in a if w in b]
if len(ratios) < 2:
    sys.exit(f"{path}: fewer than two prompts run by both {method} and {baseline}")
half = 1.96 * statistics.stdev(ratios) / math.sqrt(len(ratios))
print(f"{method} over {baseline}: {statistics.mean(ratios):.3f}x +- {half:.3f} over {len(ratios)} prompts ({path})")
