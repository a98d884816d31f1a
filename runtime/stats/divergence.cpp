#include "stats/divergence.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

namespace specd {
namespace {

// The k highest logits' token ids; equal logits rank the lower id first, so the set is deterministic.
std::vector<int64_t> top_tokens(const float* logits, int64_t vocab, int64_t k) {
  for (int64_t i = 0; i < vocab; ++i)
    if (std::isnan(logits[i])) throw std::invalid_argument("JS divergence: NaN logit at token " + std::to_string(i));
  std::vector<int64_t> ids(static_cast<size_t>(vocab));
  std::iota(ids.begin(), ids.end(), 0);
  const auto higher = [logits](int64_t a, int64_t b) { return logits[a] > logits[b] || (logits[a] == logits[b] && a < b); };
  std::nth_element(ids.begin(), ids.begin() + (k - 1), ids.end(), higher);
  ids.resize(static_cast<size_t>(k));
  return ids;
}

// Softmax at temperature of logits[support], plus mu on each entry, renormalized.
std::vector<double> smoothed_distribution(const float* logits, const std::vector<int64_t>& support, double temperature,
                                          double mu) {
  double top = -INFINITY;
  for (int64_t id : support) top = std::max(top, static_cast<double>(logits[id]));
  if (top == -INFINITY) throw std::invalid_argument("JS divergence: every logit of the support is -inf");
  std::vector<double> p;
  p.reserve(support.size());
  double sum = 0;
  for (int64_t id : support) sum += p.emplace_back(std::exp((logits[id] - top) / temperature));
  const double smoothed_sum = 1 + mu * static_cast<double>(support.size());
  for (double& v : p) v = (v / sum + mu) / smoothed_sum;
  return p;
}

// x log(x / m), 0 at x = 0.
double kl_term(double x, double m) { return x > 0 ? x * std::log(x / m) : 0.0; }

}  // namespace

double topk_js_divergence(const float* logits_q, const float* logits_r, int64_t vocab, double temperature, int32_t k,
                          double mu) {
  if (vocab < 1 || k < 1) throw std::invalid_argument("JS divergence: vocab and k must be positive");
  if (!(temperature >= 0)) throw std::invalid_argument("JS divergence: negative temperature");
  if (!(mu >= 0) || std::isinf(mu)) throw std::invalid_argument("JS divergence: mu must be finite and >= 0");
  if (temperature == 0) temperature = 1;
  const int64_t top_k = std::min<int64_t>(k, vocab);
  std::vector<int64_t> support = top_tokens(logits_q, vocab, top_k);
  const std::vector<int64_t> r_top = top_tokens(logits_r, vocab, top_k);
  support.insert(support.end(), r_top.begin(), r_top.end());
  std::sort(support.begin(), support.end());
  support.erase(std::unique(support.begin(), support.end()), support.end());

  std::vector<double> q = smoothed_distribution(logits_q, support, temperature, mu);
  std::vector<double> r = smoothed_distribution(logits_r, support, temperature, mu);
  // One canonical order of the two rows: the optimizer may round the two KL sums differently
  // (fused multiply-adds, vectorized loops), and JS(q, r) must equal JS(r, q) to the last bit.
  if (r < q) std::swap(q, r);
  double kl_q = 0, kl_r = 0;
  for (size_t i = 0; i < support.size(); ++i) {
    const double m = 0.5 * (q[i] + r[i]);
    kl_q += kl_term(q[i], m);
    kl_r += kl_term(r[i], m);
  }
  return std::max(0.0, 0.5 * (kl_q + kl_r));  // rounding can leave -1e-17 for equal rows
}

}  // namespace specd
