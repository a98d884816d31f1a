#include "stats/conformal.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace specd {
namespace {

constexpr int64_t kDeltaScale = 1000000000;  // delta's 9 decimal digits

// delta as an integer numerator over kDeltaScale.
int64_t delta_numerator(double delta) {
  if (!(delta > 0 && delta < 1))
    throw std::invalid_argument("conformal rank: delta " + std::to_string(delta) + " is not in (0, 1)");
  const double scaled = delta * static_cast<double>(kDeltaScale);
  const double numerator = std::round(scaled);
  // Doubles near 10^9 are spaced 1.2e-7 apart: a 9-digit decimal lands within that of an integer.
  if (std::fabs(scaled - numerator) > 1e-4)
    throw std::invalid_argument("conformal rank: delta " + std::to_string(delta) +
                                " has more than 9 digits after the point");
  return static_cast<int64_t>(numerator);
}

}  // namespace

int64_t conformal_rank(int64_t n, double delta) {
  if (n < 0) throw std::invalid_argument("conformal rank: negative sample count " + std::to_string(n));
  const int64_t d = delta_numerator(delta);
  // (n + 1)(S - d) overflows 64 bits for n above ~9e9; 128-bit keeps it exact for every int64 n.
  const __int128 numerator = static_cast<__int128>(n + 1) * (kDeltaScale - d);
  return static_cast<int64_t>((numerator + kDeltaScale - 1) / kDeltaScale);
}

int64_t conformal_min_samples(double delta) {
  const int64_t d = delta_numerator(delta);
  return (kDeltaScale - d + d - 1) / d;
}

double conformal_quantile(std::vector<double> values, double delta) {
  for (double v : values)
    if (std::isnan(v)) throw std::invalid_argument("conformal quantile: a score is NaN");
  const int64_t rank = conformal_rank(static_cast<int64_t>(values.size()), delta);
  if (rank > static_cast<int64_t>(values.size())) return std::numeric_limits<double>::infinity();
  const auto kth = values.begin() + (rank - 1);
  std::nth_element(values.begin(), kth, values.end());
  return *kth;
}

}  // namespace specd
