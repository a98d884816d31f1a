#pragma once
// Two-sided confidence intervals for a binomial proportion (successes out of n): the coverage audit
// reports both, as Table 5 of the ARC-Decode paper reports Wilson's.
#include <cstdint>
#include <utility>
#include <vector>

namespace specd {

struct Interval {
  double low = 0, high = 0;
};

// Wilson score interval (Newcombe 1998, as scipy's binomtest proportion_ci(method="wilson")): its
// low end is exactly 0 at 0 successes and its high end exactly 1 at n. n = 0: [0, 1] (no data).
// std::invalid_argument for successes outside [0, n] or confidence outside (0, 1).
Interval wilson_interval(int64_t successes, int64_t n, double confidence = 0.95);

// Clopper-Pearson (exact) interval from the beta quantiles: low = B(a/2; k, n-k+1), 0 at k = 0;
// high = B(1-a/2; k+1, n-k), 1 at k = n; a = 1 - confidence. n = 0: [0, 1]. Errors as Wilson's.
Interval clopper_pearson_interval(int64_t successes, int64_t n, double confidence = 0.95);

// A proportion pooled over clusters (successes, n) per cluster, e.g. the tokens of one prompt,
// which need not be independent within a cluster: the ratio estimator p = sum s_k / sum n_k with
// its linearized (sandwich) variance K/(K-1) * sum (s_k - p n_k)^2 / (sum n_k)^2 and a Student t
// quantile with K - 1 degrees of freedom (Cochran 1977, ch. 6; the survey and GEE "robust"
// interval), clamped to [0, 1]. Clusters with n = 0 are dropped; fewer than two left: [0, 1]. When
// every cluster has the same rate (no spread to estimate from), Wilson's interval at that rate with
// one observation per cluster.
// std::invalid_argument as Wilson's for a cluster's counts.
Interval cluster_interval(const std::vector<std::pair<int64_t, int64_t>>& clusters, double confidence = 0.95);

}  // namespace specd
