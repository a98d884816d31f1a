#pragma once
// Split-conformal quantiles (the ARC-Decode paper Algorithm 1, lines 11-14): the ceil((n + 1)(1 - delta))-th
// smallest of n calibration scores bounds a new exchangeable score with probability >= 1 - delta.
#include <cstdint>
#include <vector>

namespace specd {

// ceil((n + 1)(1 - delta)) in exact integer arithmetic: delta, in (0, 1), is read as a decimal
// with at most 9 digits after the point (0.05 is 50000000 / 10^9), so a rank that is an integer
// on paper is not pushed up by one through floating rounding. May exceed n. std::invalid_argument
// for n < 0, delta outside (0, 1) or with more digits.
int64_t conformal_rank(int64_t n, double delta);

// The fewest scores whose conformal rank is at most n: ceil((1 - delta) / delta), 19 at 0.05.
int64_t conformal_min_samples(double delta);

// The conformal_rank(n, delta)-th smallest of `values` (1-based); +infinity when that rank exceeds
// n (too few scores for a finite bound). A NaN value is an std::invalid_argument.
double conformal_quantile(std::vector<double> values, double delta);

}  // namespace specd
