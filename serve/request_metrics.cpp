#include "serve/request_metrics.h"

#include <algorithm>

namespace specd::serve {

void SpeculativeMetrics::add_step(const DraftTree& tree, const AcceptResult& result) {
  ++steps;
  const int32_t drafted = tree.size() - 1;
  const int32_t accepted = static_cast<int32_t>(result.path.size()) - 1;
  if (drafted > 0) ++drafts;
  draft_tokens += drafted;
  accepted_tokens += accepted;
  rescued += result.count(NodeVerdict::Rescued);
  relaxed += result.count(NodeVerdict::Relaxed);
  const int32_t depth = tree.depth();
  if (static_cast<int32_t>(drafted_at.size()) < depth) {
    drafted_at.resize(depth, 0);
    accepted_at.resize(depth, 0);
  }
  for (int32_t d = 0; d < depth; ++d) ++drafted_at[d];
  for (int32_t d = 0; d < accepted; ++d) ++accepted_at[d];
}

nlohmann::json SpeculativeMetrics::to_json() const {
  nlohmann::json acceptance = nlohmann::json::array();
  for (size_t d = 0; d < drafted_at.size(); ++d)
    acceptance.push_back(drafted_at[d] ? static_cast<double>(accepted_at[d]) / drafted_at[d] : 0.0);
  return {{"method", method},
          {"lossless", lossless},
          {"steps", steps},
          {"num_drafts", drafts},
          {"draft_tokens", draft_tokens},
          {"accepted_tokens", accepted_tokens},
          {"acceptance_rate", draft_tokens ? static_cast<double>(accepted_tokens) / draft_tokens : 0.0},
          {"acceptance_per_position", acceptance},
          {"mean_accepted_length", mean_accepted_length()},
          {"rescued_tokens", rescued},
          {"relaxed_tokens", relaxed}};
}

}  // namespace specd::serve
