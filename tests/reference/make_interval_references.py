#!/usr/bin/env python3
"""Reference binomial confidence intervals for tests/stats/test_arc_stats.cpp, from scipy.

specd computes Wilson's interval from its formula and Clopper-Pearson's from Boost.Math's beta
quantile; the references come from scipy.stats.binomtest(k, n).proportion_ci, whose exact method
root-finds the binomial tail (brentq) rather than inverting the incomplete beta function. Each
exact bound is also checked here against scipy.stats.beta.ppf, a second route.

Regenerate (only when the cases below change; the test itself needs no Python):
    apt-get install python3-scipy          # Debian 12: scipy 1.10.1
    /usr/bin/python3 tests/reference/make_interval_references.py > tests/fixtures/intervals.json
"""
import json
import sys

import scipy
from scipy.stats import beta, binomtest

CONFIDENCES = [0.95, 0.9, 0.99]
CASES = [(0, 1), (1, 1), (0, 5), (1, 5), (5, 5), (3, 10), (9, 10), (1, 19), (18, 19), (19, 20),
         (50, 100), (95, 100), (99, 100), (100, 100), (0, 100), (1, 1000), (953, 1000), (994, 1000),
         (4997, 5000), (12345, 20000)]


def exact_by_beta(k, n, confidence):
    tail = (1 - confidence) / 2
    low = 0.0 if k == 0 else beta.ppf(tail, k, n - k + 1)
    high = 1.0 if k == n else beta.ppf(1 - tail, k + 1, n - k)
    return low, high


rows = []
for confidence in CONFIDENCES:
    for k, n in CASES:
        test = binomtest(k, n)
        wilson = test.proportion_ci(confidence_level=confidence, method="wilson")
        exact = test.proportion_ci(confidence_level=confidence, method="exact")
        by_beta = exact_by_beta(k, n, confidence)
        if abs(exact.low - by_beta[0]) > 1e-10 or abs(exact.high - by_beta[1]) > 1e-10:
            sys.exit(f"exact interval of {k}/{n} at {confidence}: binomtest and beta.ppf disagree")
        rows.append({"successes": k, "n": n, "confidence": confidence,
                     "wilson": [wilson.low, wilson.high], "clopper_pearson": [exact.low, exact.high]})

# One case a line, floats in Python's round-trip repr.
generator = f"tests/reference/make_interval_references.py, scipy {scipy.__version__}"
print('{"generator": ' + json.dumps(generator) + ',\n "intervals": [')
print(",\n".join("  " + json.dumps(row) for row in rows))
print("]}")
