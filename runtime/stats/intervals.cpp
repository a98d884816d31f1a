#include "stats/intervals.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include <boost/math/distributions/beta.hpp>
#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>

namespace specd {
namespace {

void check_arguments(const char* what, int64_t successes, int64_t n, double confidence) {
  if (n < 0 || successes < 0 || successes > n)
    throw std::invalid_argument(std::string(what) + ": " + std::to_string(successes) + " successes out of " +
                                std::to_string(n));
  if (!(confidence > 0 && confidence < 1))
    throw std::invalid_argument(std::string(what) + ": confidence " + std::to_string(confidence) +
                                " is not in (0, 1)");
}

// Wilson's interval for a rate p over nn observations (nn > 0).
Interval wilson(double p, double nn, double confidence) {
  const double z = boost::math::quantile(boost::math::normal(), 0.5 + 0.5 * confidence), q = 1 - p;
  const double denom = 2 * (nn + z * z);
  const double center = (2 * nn * p + z * z) / denom;
  const double half = z / denom * std::sqrt(4 * nn * p * q + z * z);
  // At the edges the formula gives 0 and 1 up to rounding; state them exactly.
  return {p == 0 ? 0.0 : center - half, p == 1 ? 1.0 : center + half};
}

}  // namespace

Interval wilson_interval(int64_t successes, int64_t n, double confidence) {
  check_arguments("Wilson interval", successes, n, confidence);
  if (n == 0) return {0, 1};
  return wilson(static_cast<double>(successes) / static_cast<double>(n), static_cast<double>(n), confidence);
}

Interval clopper_pearson_interval(int64_t successes, int64_t n, double confidence) {
  check_arguments("Clopper-Pearson interval", successes, n, confidence);
  if (n == 0) return {0, 1};
  const double tail = (1 - confidence) / 2;
  const double k = static_cast<double>(successes), nn = static_cast<double>(n);
  Interval interval{0, 1};
  if (successes > 0) interval.low = boost::math::quantile(boost::math::beta_distribution<>(k, nn - k + 1), tail);
  if (successes < n) interval.high = boost::math::quantile(boost::math::beta_distribution<>(k + 1, nn - k), 1 - tail);
  return interval;
}

Interval cluster_interval(const std::vector<std::pair<int64_t, int64_t>>& clusters, double confidence) {
  double successes = 0, total = 0;
  int64_t k = 0;
  for (const auto& [s, n] : clusters) {
    check_arguments("cluster interval", s, n, confidence);
    if (n == 0) continue;
    successes += static_cast<double>(s);
    total += static_cast<double>(n);
    ++k;
  }
  if (k < 2) return {0, 1};
  const double p = successes / total;
  double sum = 0;
  bool same_rate = true;  // s_k / n_k equal for every cluster, compared exactly (cross products)
  const auto& [s0, n0] = *std::find_if(clusters.begin(), clusters.end(), [](const auto& c) { return c.second > 0; });
  for (const auto& [s, n] : clusters) {
    const double r = static_cast<double>(s) - p * static_cast<double>(n);
    sum += r * r;
    if (n > 0 && s * n0 != s0 * n) same_rate = false;
  }
  const double kk = static_cast<double>(k);
  // Every cluster at the same rate (all covered, say): the spread between clusters is 0 and says
  // nothing of the variance. Count each cluster as one observation instead (the largest design
  // effect clustering can have) rather than claim a zero-width interval.
  if (same_rate) return wilson(p, kk, confidence);
  const double se = std::sqrt(kk / (kk - 1) * sum) / total;
  const double t = boost::math::quantile(boost::math::students_t(kk - 1), 0.5 + 0.5 * confidence);
  return {std::max(0.0, p - t * se), std::min(1.0, p + t * se)};
}

}  // namespace specd
