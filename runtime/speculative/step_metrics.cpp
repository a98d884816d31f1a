#include "speculative/step_metrics.h"

#include "util/vector_math.h"

#include <algorithm>
#include <cmath>

namespace specd {

char draft_source_letter(DraftSource source) {
  switch (source) {
    case DraftSource::Root: return '-';
    case DraftSource::Model: return 'M';
    case DraftSource::Retrieval: return 'R';
    case DraftSource::Branch: return 'B';
    case DraftSource::Successor: return 'S';
  }
  return '?';
}

std::string accepted_sources(const DraftTree& tree, const AcceptResult& result) {
  std::string letters;
  for (size_t i = 1; i < result.path.size(); ++i) {
    if (!letters.empty()) letters += ',';
    letters += draft_source_letter(tree.sources[result.path[i]]);
  }
  return letters;
}

namespace {

double softmax_entropy_exact(const float* logits, int64_t vocab) {
  const float max_logit = *std::max_element(logits, logits + vocab);
  double z = 0.0, weighted = 0.0;
  for (int64_t i = 0; i < vocab; ++i) {
    const double shifted = static_cast<double>(logits[i]) - max_logit;
    if (!std::isfinite(shifted)) continue;  // -inf logits carry no mass
    const double e = std::exp(shifted);
    z += e;
    weighted += e * shifted;
  }
  return std::log(z) - weighted / z;
}

}  // namespace

double softmax_entropy(const float* logits, int64_t vocab) {
  // H = log Z - sum_i p_i s_i with s = z - max z. Computed every step, so vectorised: the scalar
  // double-precision loop cost a tenth of a small target's decoding step.
  thread_local std::vector<float> shifted, exps;
  if (vocab <= 0) return 0.0;
  const float max_logit = cpu::max_value(logits, vocab);
  if (!std::isfinite(max_logit) || !std::all_of(logits, logits + vocab, [](float z) { return z > -1e30f; }))
    return softmax_entropy_exact(logits, vocab);  // masked (-inf) logits: the careful path
  shifted.resize(vocab);
  for (int64_t i = 0; i < vocab; ++i) shifted[i] = logits[i] - max_logit;
  exps = shifted;
  const double z = cpu::exp_shifted_sum(exps.data(), vocab, 0.0f);
  const double weighted = cpu::dot(exps.data(), shifted.data(), vocab);
  return std::log(z) - weighted / z;
}

}  // namespace specd
