#include "artifact/csd_pairs.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <numeric>
#include <stdexcept>
#include <tuple>
#include <utility>

namespace specd {
namespace {

// The ceil(q * n)-th smallest of n sorted values. The small epsilon keeps q * n that is an integer
// in exact arithmetic (0.1 * 30) from rounding up to the next rank.
double nearest_rank(const std::vector<double>& sorted, double q) {
  const auto n = static_cast<double>(sorted.size());
  const auto rank = static_cast<size_t>(std::max(1.0, std::ceil(q * n - 1e-9)));
  return sorted[std::min(rank, sorted.size()) - 1];
}

}  // namespace

std::vector<CsdPair> summarize_pairs(const std::vector<CsdRejection>& rejections) {
  std::map<std::pair<int32_t, int32_t>, std::vector<double>> gaps;
  for (const CsdRejection& r : rejections) gaps[{r.draft_token, r.target_token}].push_back(r.logit_gap);
  std::vector<CsdPair> pairs;
  pairs.reserve(gaps.size());
  for (auto& [tokens, values] : gaps) {
    std::sort(values.begin(), values.end());
    CsdPair pair;
    pair.draft_token = tokens.first;
    pair.target_token = tokens.second;
    pair.count = static_cast<int64_t>(values.size());
    pair.gap_mean = std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
    pair.gap_min = values.front();
    pair.gap_p10 = nearest_rank(values, 0.10);
    pair.gap_median = nearest_rank(values, 0.50);
    pair.gap_p90 = nearest_rank(values, 0.90);
    pair.gap_max = values.back();
    pairs.push_back(pair);
  }
  std::stable_sort(pairs.begin(), pairs.end(), [](const CsdPair& a, const CsdPair& b) { return a.count > b.count; });
  return pairs;
}

double pareto_share(const std::vector<CsdPair>& pairs, double fraction) {
  if (!(fraction >= 0 && fraction <= 1)) throw std::invalid_argument("pareto_share: fraction must be in [0, 1]");
  std::vector<int64_t> counts;
  for (const CsdPair& pair : pairs) counts.push_back(pair.count);
  std::sort(counts.begin(), counts.end(), std::greater<>());
  const int64_t total = std::accumulate(counts.begin(), counts.end(), int64_t{0});
  if (total == 0) return 0;
  const auto top = static_cast<size_t>(std::ceil(fraction * static_cast<double>(counts.size()) - 1e-9));
  const int64_t covered = std::accumulate(counts.begin(), counts.begin() + static_cast<std::ptrdiff_t>(std::min(top, counts.size())), int64_t{0});
  return static_cast<double>(covered) / static_cast<double>(total);
}

void sort_rejections(std::vector<CsdRejection>& rejections) {
  std::stable_sort(rejections.begin(), rejections.end(), [](const CsdRejection& a, const CsdRejection& b) {
    return std::tie(a.prompt, a.step, a.depth) < std::tie(b.prompt, b.step, b.depth);
  });
}

}  // namespace specd
