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

}  // namespace

Interval wilson_interval(int64_t successes, int64_t n, double confidence) {
  check_arguments("Wilson interval", successes, n, confidence);
  if (n == 0) return {0, 1};
  const double z = boost::math::quantile(boost::math::normal(), 0.5 + 0.5 * confidence);
  const double nn = static_cast<double>(n), p = successes / nn, q = 1 - p;
  const double denom = 2 * (nn + z * z);
  const double center = (2 * nn * p + z * z) / denom;
  const double half = z / denom * std::sqrt(4 * nn * p * q + z * z);
  // At the edges the formula gives 0 and 1 up to rounding; state them exactly.
  return {successes == 0 ? 0.0 : center - half, successes == n ? 1.0 : center + half};
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
  for (const auto& [s, n] : clusters) {
    const double r = static_cast<double>(s) - p * static_cast<double>(n);
    sum += r * r;
  }
  const double kk = static_cast<double>(k);
  const double se = std::sqrt(kk / (kk - 1) * sum) / total;
  const double t = boost::math::quantile(boost::math::students_t(kk - 1), 0.5 + 0.5 * confidence);
  return {std::max(0.0, p - t * se), std::min(1.0, p + t * se)};
}

}  // namespace specd
