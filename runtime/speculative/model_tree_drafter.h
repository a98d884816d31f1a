#pragma once
// A dynamic draft tree from the draft model, as EAGLE-2 builds it: each level expands the top_k
// frontier nodes by cumulative log-probability (the log of the product of draft probabilities
// along the path) into top_k children each, one draft forward per level; then the best
// max_nodes nodes of the whole pool form the tree (ancestor-closed, parents before children).
// Children are deterministic (top-k), so acceptance uses the point-mass rule at T > 0.
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "speculative/draft_model_runner.h"
#include "speculative/drafter.h"

namespace specd {

struct TreeDraftOptions {
  int32_t top_k = 4;   // children per expanded node, and frontier width
  int32_t depth = 5;   // levels
  int32_t nodes = 16;  // drafted nodes kept (also capped by the step's budget)
};

// The k largest log-probabilities (log-softmax) of one row of `vocab` logits, best first, ties to
// the lower id; `scratch` is working memory the caller keeps between calls.
std::vector<std::pair<int32_t, double>> draft_top_log_probs(const float* logits, int64_t vocab, int32_t k,
                                                            std::vector<float>& scratch);

class ModelTreeDrafter : public Drafter {
 public:
  ModelTreeDrafter(std::shared_ptr<const LlamaModel> draft, const TreeDraftOptions& options);
  std::string name() const override { return "draft-tree"; }
  void begin(const std::vector<int32_t>& prompt, uint64_t seed) override { runner_.reset(); }
  DraftTree propose(const DraftRequest& request) override;
  std::unique_ptr<DraftRounds> propose_in_rounds(const DraftRequest& request) override;
  int64_t last_catch_up() const override { return catch_up_; }
  void observe(const StepFeedback& feedback) override {}

 private:
  class Rounds;
  DraftModelRunner runner_;
  int64_t catch_up_ = 0;  // last_catch_up()
  TreeDraftOptions options_;
  std::vector<float> scratch_;  // draft_top_log_probs' working memory
};

}  // namespace specd
