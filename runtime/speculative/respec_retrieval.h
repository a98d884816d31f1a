#pragma once
// ReSpec's retriever parts (the ReSpec paper §3.2-3.3, Algorithm 1 lines 4-17 and 21-28), each small
// enough to check by hand: the entropy-guided key choice, an exact-match index of every earlier
// occurrence of a key, and the per-position EMA scores.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <unordered_map>
#include <vector>

namespace specd {

// The key chosen over k = 1..max_key: H_k = mean of the last k entropies, C_k = H_k + lambda_e/k,
// k* = argmin C_k (ties: the smaller k), H_min = H_k*. k = 0 when no entropy is known.
struct KeyChoice {
  int32_t k = 0;
  double h_min = std::numeric_limits<double>::infinity();
  double cost = std::numeric_limits<double>::infinity();
};

// `recent`: the entropies of the distributions that produced the text's last tokens, oldest
// first, the one that produced the last token last; only known ones (a k longer than recent is
// skipped, as its H_k is unknown). `allowed` (index k, may be null): only those k compete.
KeyChoice choose_key(const std::vector<double>& recent, int32_t max_key, double lambda_e, const std::vector<bool>* allowed = nullptr);

// Every earlier occurrence of each n-gram (n = 1..max_n) of a growing text, by the position of
// its last token. The paper's "suffix automaton" serves only as an exact-match store here (which
// positions end with this key?); a hash of the n-gram to its end positions answers that with one
// look-up per proposal, and grows by max_n entries per appended token. Hash collisions are
// harmless: every candidate window is compared with the key.
class NgramPositions {
 public:
  explicit NgramPositions(int32_t max_n = 3) : max_n_(max_n) { by_length_.resize(max_n); }
  void clear();
  void append(int32_t token);
  const std::vector<int32_t>& text() const { return text_; }
  // End positions p (ascending) with text[p-n+1..p] == key[0..n), n = key length <= max_n.
  std::vector<int32_t> matches(const int32_t* key, int32_t n) const;

 private:
  int32_t max_n_;
  std::vector<int32_t> text_;
  std::vector<std::unordered_map<uint64_t, std::vector<int32_t>>> by_length_;  // [n - 1]
};

// Per match position (the end position of the match in the text), an EMA quality score:
// S <- (1 - alpha) S + alpha R (eq. 4); a position never updated scores S0.
class EmaScores {
 public:
  EmaScores(double alpha, double initial) : alpha_(alpha), initial_(initial) {}
  double score(int32_t position) const;
  // Applies one update with outcome r and returns the new score.
  double update(int32_t position, double r);
  size_t size() const { return scores_.size(); }  // positions updated at least once
  void clear() { scores_.clear(); }

 private:
  double alpha_, initial_;
  std::unordered_map<int32_t, double> scores_;
};

// Algorithm 1 lines 16-17: keep positions scoring at least theta_score, the best `count` by
// score (ties: the later position first, the closer context). Without the EMA (the no-ema
// ablation): the latest `count` positions, unfiltered.
std::vector<int32_t> select_candidates(const std::vector<int32_t>& positions, const EmaScores& scores, double theta_score,
                                       int32_t count, bool use_ema);

}  // namespace specd
