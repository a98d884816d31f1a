#include "stats/statistics.h"

#include <algorithm>
#include <cmath>

namespace specd {

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t mid = values.size() / 2;
  return values.size() % 2 ? values[mid] : 0.5 * (values[mid - 1] + values[mid]);
}

double MeanAccumulator::ci95() const {
  if (n < 2) return 0.0;
  const double m = mean();
  const double variance = std::max(0.0, (squares - n * m * m) / (n - 1));
  return 1.96 * std::sqrt(variance / n);
}

}  // namespace specd
