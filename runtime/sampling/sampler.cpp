#include "sampling/sampler.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "util/error.h"
#include "util/vector_math.h"

namespace specd {

void validate(const SamplingParams& params) {
  if (!(params.temperature >= 0.0) || !std::isfinite(params.temperature))
    input_error("sampling", "temperature must be a finite number >= 0");
  if (params.temperature > 0.0 && params.temperature < kMinTemperature)
    input_error("sampling", "a temperature above 0 must be at least 1e-6 (0 is greedy)");
  if (params.top_k < 0) input_error("sampling", "top_k must be >= 0 (0 turns it off)");
  if (!(params.top_p > 0.0 && params.top_p <= 1.0)) input_error("sampling", "top_p must be in (0, 1]");
}

int32_t argmax(const float* logits, int64_t vocab) { return static_cast<int32_t>(cpu::first_max_index(logits, vocab)); }

SamplingParams drafter_stream(SamplingParams params, uint64_t request_seed) {
  params.seed = request_seed * 6364136223846793005ULL + 1442695040888963407ULL;
  return params;
}

std::vector<double> shaped_distribution(const float* logits, int64_t vocab, const SamplingParams& params) {
  std::vector<double> scaled(static_cast<size_t>(vocab));
  for (int64_t i = 0; i < vocab; ++i) scaled[i] = static_cast<double>(logits[i]) / params.temperature;

  std::vector<bool> kept(static_cast<size_t>(vocab), true);
  if (params.top_k > 0 && params.top_k < vocab) {
    std::vector<double> sorted = scaled;
    std::nth_element(sorted.begin(), sorted.begin() + (params.top_k - 1), sorted.end(), std::greater<double>());
    double kth = sorted[params.top_k - 1];
    for (int64_t i = 0; i < vocab; ++i) kept[i] = scaled[i] >= kth;
  }

  double max_logit = -INFINITY;
  for (int64_t i = 0; i < vocab; ++i)
    if (kept[i]) max_logit = std::max(max_logit, scaled[i]);
  std::vector<double> probs(static_cast<size_t>(vocab), 0.0);
  double total = 0.0;
  for (int64_t i = 0; i < vocab; ++i) {
    if (kept[i]) total += probs[i] = std::exp(scaled[i] - max_logit);
  }
  for (auto& p : probs) p /= total;

  if (params.top_p < 1.0) {
    // Most likely first (ties by lower id); a token stays while the mass before it is < p,
    // so the token that crosses p is kept, as in Hugging Face's TopPLogitsWarper.
    // Only the head of that order matters: sort the m most likely (partial_sort, O(V log m)) and
    // widen m until the nucleus ends inside it. Same order, same sums as sorting everything, which
    // cost more than a small model's forward at 4k tokens of vocabulary and far more at 150k.
    std::vector<int64_t> order(static_cast<size_t>(vocab));
    std::iota(order.begin(), order.end(), 0);
    auto before = [&](int64_t a, int64_t b) { return probs[a] > probs[b] || (probs[a] == probs[b] && a < b); };
    double kept_mass = 0.0;
    int64_t kept_count = 0;
    for (int64_t m = std::min<int64_t>(vocab, 64);; m = std::min<int64_t>(vocab, m * 4)) {
      std::partial_sort(order.begin(), order.begin() + m, order.end(), before);
      kept_mass = 0.0;
      kept_count = 0;
      while (kept_count < m && kept_mass < params.top_p) kept_mass += probs[order[kept_count++]];
      if (kept_count < m || m == vocab) break;  // the nucleus closed inside the sorted head
    }
    std::vector<double> nucleus(static_cast<size_t>(vocab), 0.0);
    for (int64_t i = 0; i < kept_count; ++i) nucleus[order[i]] = probs[order[i]];
    probs.swap(nucleus);
    for (auto& p : probs) p /= kept_mass;
  }
  return probs;
}

int32_t draw(const std::vector<double>& probabilities, double u) {
  double cumulative = 0.0;
  int32_t last_nonzero = 0;
  for (size_t i = 0; i < probabilities.size(); ++i) {
    if (probabilities[i] <= 0.0) continue;
    cumulative += probabilities[i];
    last_nonzero = static_cast<int32_t>(i);
    if (u < cumulative) return last_nonzero;
  }
  return last_nonzero;  // u beyond the rounded total
}

Sampler::Sampler(const SamplingParams& params) : params_(params), rng_(params.seed) { validate(params); }

double Sampler::uniform() { return static_cast<double>(rng_() >> 11) * 0x1.0p-53; }

int32_t Sampler::sample(const float* logits, int64_t vocab) {
  if (params_.temperature == 0.0) return argmax(logits, vocab);
  return draw(shaped_distribution(logits, vocab, params_), uniform());
}

}  // namespace specd
