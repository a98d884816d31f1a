#include "speculative/respec_retrieval.h"

#include <algorithm>

namespace specd {
namespace {

uint64_t mix64(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  return x ^ (x >> 33);
}

uint64_t hash_ngram(const int32_t* tokens, int32_t n) {
  uint64_t h = static_cast<uint64_t>(n);
  for (int32_t i = 0; i < n; ++i) h = mix64(h ^ static_cast<uint32_t>(tokens[i]));
  return h;
}

}  // namespace

KeyChoice choose_key(const std::vector<double>& recent, int32_t max_key, double lambda_e, const std::vector<bool>* allowed) {
  KeyChoice best;
  double sum = 0;
  const int32_t known = static_cast<int32_t>(recent.size());
  for (int32_t k = 1; k <= max_key && k <= known; ++k) {
    sum += recent[known - k];
    const double h = sum / k;
    const double cost = h + lambda_e / k;
    if (allowed && (static_cast<size_t>(k) >= allowed->size() || !(*allowed)[k])) continue;
    if (cost < best.cost) best = {k, h, cost};  // strict: ties keep the smaller k
  }
  return best;
}

void NgramPositions::clear() {
  text_.clear();
  for (auto& index : by_length_) index.clear();
}

void NgramPositions::append(int32_t token) {
  text_.push_back(token);
  const int32_t end = static_cast<int32_t>(text_.size()) - 1;
  for (int32_t n = 1; n <= max_n_ && n <= end + 1; ++n)
    by_length_[n - 1][hash_ngram(text_.data() + end - n + 1, n)].push_back(end);
}

std::vector<int32_t> NgramPositions::matches(const int32_t* key, int32_t n) const {
  std::vector<int32_t> out;
  if (n < 1 || n > max_n_) return out;
  const auto found = by_length_[n - 1].find(hash_ngram(key, n));
  if (found == by_length_[n - 1].end()) return out;
  for (int32_t end : found->second)
    if (std::equal(key, key + n, text_.data() + end - n + 1)) out.push_back(end);
  return out;
}

double EmaScores::score(int32_t position) const {
  const auto it = scores_.find(position);
  return it == scores_.end() ? initial_ : it->second;
}

double EmaScores::update(int32_t position, double r) {
  const double s = (1.0 - alpha_) * score(position) + alpha_ * r;
  scores_[position] = s;
  return s;
}

std::vector<int32_t> select_candidates(const std::vector<int32_t>& positions, const EmaScores& scores, double theta_score,
                                       int32_t count, bool use_ema) {
  std::vector<int32_t> kept;
  if (!use_ema) {
    for (auto it = positions.rbegin(); it != positions.rend() && static_cast<int32_t>(kept.size()) < count; ++it) kept.push_back(*it);
    return kept;
  }
  std::vector<std::pair<double, int32_t>> scored;
  for (int32_t p : positions) {
    const double s = scores.score(p);
    if (s >= theta_score) scored.emplace_back(s, p);
  }
  std::sort(scored.begin(), scored.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second > b.second;
  });
  for (size_t i = 0; i < scored.size() && static_cast<int32_t>(i) < count; ++i) kept.push_back(scored[i].second);
  return kept;
}

}  // namespace specd
