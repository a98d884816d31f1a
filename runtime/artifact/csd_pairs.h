#pragma once
// CSD's correction memory from its rejection events, and the Pareto figure of the paper.
#include <vector>

#include "artifact/artifact.h"

namespace specd {

// One row per (draft, target) token pair, sorted by count descending, then draft_token and
// target_token ascending. Quantiles are nearest-rank over the pair's gaps sorted ascending: the
// q-quantile of n gaps is the ceil(q * n)-th smallest (the first for q * n <= 1), so the median
// of an even count is the lower middle one. The mean sums the sorted gaps in double, so it does
// not depend on the order of the rejections.
std::vector<CsdPair> summarize_pairs(const std::vector<CsdRejection>& rejections);

// The share of all rejections that the most frequent ceil(fraction * pairs) pairs account for
// (the paper: the top 20% of pairs cover 69%). 0 for an empty table.
double pareto_share(const std::vector<CsdPair>& pairs, double fraction);

// The order rejections are stored in: (prompt, step, depth); a stable sort keeps the rest.
void sort_rejections(std::vector<CsdRejection>& rejections);

}  // namespace specd
