#include "trace/step_metrics.h"

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

double softmax_entropy(const float* logits, int64_t vocab) {
  // H = log Z - sum p_i z_i with z shifted by the max for stability.
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

}  // namespace specd
