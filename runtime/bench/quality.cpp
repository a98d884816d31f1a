#include "bench/quality.h"

#include <algorithm>
#include <map>

#include "util/utf8.h"

namespace specd {

int64_t first_divergence(const std::vector<int32_t>& a, const std::vector<int32_t>& b) {
  const size_t n = std::min(a.size(), b.size());
  for (size_t i = 0; i < n; ++i)
    if (a[i] != b[i]) return static_cast<int64_t>(i);
  return a.size() == b.size() ? -1 : static_cast<int64_t>(n);
}

namespace {

std::u32string characters_without_whitespace(const std::string& text) {
  std::u32string out;
  const std::string valid = utf8_lossy(text);
  for (size_t pos = 0; pos < valid.size();) {
    const char32_t c = next_code_point(valid, pos);
    if (c != U' ' && c != U'\t' && c != U'\n' && c != U'\r' && c != U'\v' && c != U'\f') out.push_back(c);
  }
  return out;
}

std::map<std::u32string, int> ngrams(const std::u32string& text, size_t n) {
  std::map<std::u32string, int> counts;
  for (size_t i = 0; i + n <= text.size(); ++i) ++counts[text.substr(i, n)];
  return counts;
}

}  // namespace

void ChrfStats::add(const ChrfStats& other) {
  for (int n = 0; n < kOrders; ++n) {
    hypothesis[n] += other.hypothesis[n];
    reference[n] += other.reference[n];
    matches[n] += other.matches[n];
  }
}

double ChrfStats::score() const {
  constexpr double beta2 = 4.0;
  double precision = 0, recall = 0;
  int orders = 0;
  for (int n = 0; n < kOrders; ++n) {
    if (hypothesis[n] <= 0 || reference[n] <= 0) continue;
    precision += matches[n] / hypothesis[n];
    recall += matches[n] / reference[n];
    ++orders;
  }
  if (orders == 0) return 0.0;
  precision /= orders;
  recall /= orders;
  if (precision + recall <= 0) return 0.0;
  return 100.0 * (1 + beta2) * precision * recall / (beta2 * precision + recall);
}

ChrfStats chrf_stats(const std::string& hypothesis, const std::string& reference) {
  const std::u32string hyp = characters_without_whitespace(hypothesis), ref = characters_without_whitespace(reference);
  ChrfStats stats;
  for (int n = 1; n <= ChrfStats::kOrders; ++n) {
    const auto h = ngrams(hyp, n), r = ngrams(ref, n);
    for (const auto& [gram, count] : h) {
      stats.hypothesis[n - 1] += count;
      const auto it = r.find(gram);
      if (it != r.end()) stats.matches[n - 1] += std::min(count, it->second);
    }
    for (const auto& [gram, count] : r) stats.reference[n - 1] += count;
  }
  return stats;
}

}  // namespace specd
