#pragma once
// How far a lossy policy's output drifts from the target's, for specd bench: the position where
// two token sequences first differ, and chrF against a reference text.
#include <cstdint>
#include <string>
#include <vector>

namespace specd {

// Index of the first token where a and b differ; the shorter length when one is a prefix of the
// other; -1 when they are equal.
int64_t first_divergence(const std::vector<int32_t>& a, const std::vector<int32_t>& b);

// chrF statistics (Popović 2015, as sacreBLEU computes it by default): character n-grams of
// orders 1..6 over Unicode code points with whitespace removed, beta = 2. Sentences add up to a
// corpus by adding their statistics.
struct ChrfStats {
  static constexpr int kOrders = 6;
  double hypothesis[kOrders] = {}, reference[kOrders] = {}, matches[kOrders] = {};
  void add(const ChrfStats& other);
  // 0..100: F-beta of the precision and recall averaged over the orders both sides have
  // n-grams of (sacreBLEU's effective order); 0 when there is none.
  double score() const;
};

ChrfStats chrf_stats(const std::string& hypothesis, const std::string& reference);

}  // namespace specd
