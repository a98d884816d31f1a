#pragma once
// A dynamic draft tree from the draft model, as EAGLE-2 builds it, one draft forward per level,
// but with nodes chosen by how likely verification is to accept them (TreeAcceptance, learned
// from this request's verified trees) rather than by the draft's cumulative probability:
// each level gives every fed node its top_k children; the pool's best max_nodes nodes by that
// value are the tree (ancestor-closed, parents before children), and a level feeds only those of
// its nodes whose children could still enter it (at most top_k). So a sure draft grows a chain,
// as deep as the budget, and width appears only where the draft is unsure.
//
// At T = 0 children are the draft's top-k. At T > 0 they are samples: a top-k child is accepted
// only with the target's probability of it (the point-mass rule), which at T = 1 accepted a
// fifth of the tree's tokens where sd's sampled chain keeps three quarters. Each fed node draws
// its children i.i.d. from the draft's distribution shaped like the target's (kept in child_q for
// the acceptor's multi-candidate rule), and stays lossless only if no child is chosen by what it
// drew: so a node's number of children is fixed, from its value and the rates, before they are
// drawn, and every drawn child stays in the tree (the tree grows level by level, never pruned).
#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "sampling/sampler.h"
#include "speculative/draft_model_runner.h"
#include "speculative/drafter.h"
#include "speculative/tree_acceptance.h"

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
  // sampling: temperature, top-k and top-p of the sampled children (T > 0); the seed is each
  // request's (begin()).
  ModelTreeDrafter(std::shared_ptr<const LlamaModel> draft, const TreeDraftOptions& options,
                   const SamplingParams& sampling = {});
  std::string name() const override { return "draft-tree"; }
  void begin(const std::vector<int32_t>& prompt, uint64_t seed) override {
    runner_.reset();
    fed_.clear();
    last_.reset();
    acceptance_ = TreeAcceptance{};
    sampler_ = Sampler(drafter_stream(sampling_, seed));
  }
  DraftTree propose(const DraftRequest& request) override;
  std::unique_ptr<DraftRounds> propose_in_rounds(const DraftRequest& request) override;
  int64_t last_catch_up() const override { return catch_up_; }
  int64_t first_round_rows(const std::vector<int32_t>& committed) const override {
    return runner_.rows_to_sync(committed) - static_cast<int64_t>(fed_path(committed).size());
  }
  // Learns the acceptance rates from the verdicts on the tree this drafter proposed last.
  void observe(const StepFeedback& feedback) override;
  const TreeAcceptance& acceptance() const { return acceptance_; }

 private:
  class Rounds;
  // The last proposal, node by node in tree order: what observe() needs to credit each node.
  struct Proposal {
    DraftTree tree{0};
    std::vector<int8_t> bucket, rank;  // the parent's bucket and the node's rank among its siblings
  };
  // A node of the last tree that was fed to the draft model: its row in the draft's cache holds
  // the key and value its token has after the text and its ancestors.
  struct FedNode {
    int32_t token;
    int32_t parent;  // index into fed_, -1: a child of the root
    int64_t row;
  };
  // The rows of fed_ that continue the synced text as `committed` does (a path from the root),
  // in order: the next sync keeps them (DraftModelRunner::keep_path) rather than feeding them
  // again, as a chain drafter's cache keeps its accepted tokens.
  std::vector<int64_t> fed_path(const std::vector<int32_t>& committed) const;
  DraftModelRunner runner_;
  std::vector<FedNode> fed_;  // the last tree's fed nodes, parents first, until the next sync
  int64_t catch_up_ = 0;  // last_catch_up()
  TreeDraftOptions options_;
  SamplingParams sampling_;
  Sampler sampler_;  // the drafter's own random stream, restarted by begin() from the request's seed
  std::vector<float> scratch_;  // draft_top_log_probs' working memory
  TreeAcceptance acceptance_;
  std::optional<Proposal> last_;  // until observed
};

}  // namespace specd
