#include "bench/kv_precision.h"

#include <algorithm>
#include <cmath>

#include "model/llama_model.h"

namespace specd {
namespace {

// Logits of `tokens` in chunks (every position's row), so that two caches' rows are compared a
// chunk at a time rather than held whole (a long text times a large vocabulary is gigabytes).
constexpr int64_t kChunk = 64;

FloatRows chunk_logits(const LlamaModel& model, KvCache& cache, const std::vector<int32_t>& tokens, int64_t first) {
  ForwardRequest request;
  request.tokens.assign(tokens.begin() + first, tokens.begin() + std::min<int64_t>(first + kChunk, tokens.size()));
  return model.forward(cache, request).logits;
}

// log softmax of one row, in double.
std::vector<double> log_probs(const float* logits, int64_t n) {
  const double top = *std::max_element(logits, logits + n);
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += std::exp(logits[i] - top);
  const double log_sum = top + std::log(sum);
  std::vector<double> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) out[i] = logits[i] - log_sum;
  return out;
}

}  // namespace

KvPrecisionDistance kv_precision_distance(const LlamaModel& model, KvType type, const std::vector<int32_t>& tokens) {
  KvCache exact_cache = model.new_cache(static_cast<int64_t>(tokens.size()), KvType::F32);
  KvCache narrow_cache = model.new_cache(static_cast<int64_t>(tokens.size()), type);
  KvPrecisionDistance d;
  d.positions = static_cast<int64_t>(tokens.size());
  const int64_t vocab = model.config().vocab_size;
  double abs_sum = 0;
  int64_t agree = 0;
  for (int64_t first = 0; first < d.positions; first += kChunk) {
    const FloatRows exact = chunk_logits(model, exact_cache, tokens, first);
    const FloatRows narrow = chunk_logits(model, narrow_cache, tokens, first);
    for (int64_t r = 0; r < exact.rows; ++r) {
      const float* p = exact.row(r);
      const float* q = narrow.row(r);
      for (int64_t i = 0; i < vocab; ++i) {
        const double diff = std::abs(static_cast<double>(p[i]) - q[i]);
        d.max_abs_logit = std::max(d.max_abs_logit, diff);
        abs_sum += diff;
      }
      if (std::max_element(p, p + vocab) - p == std::max_element(q, q + vocab) - q) ++agree;
      const std::vector<double> lp = log_probs(p, vocab), lq = log_probs(q, vocab);
      double kl = 0;
      for (int64_t i = 0; i < vocab; ++i) kl += std::exp(lp[i]) * (lp[i] - lq[i]);
      d.mean_kl += kl;
      d.max_kl = std::max(d.max_kl, kl);
    }
  }
  if (d.positions > 0) {
    d.mean_abs_logit = abs_sum / static_cast<double>(d.positions * vocab);
    d.mean_kl /= static_cast<double>(d.positions);
    d.top1_agreement = static_cast<double>(agree) / static_cast<double>(d.positions);
  }
  return d;
}

}  // namespace specd
