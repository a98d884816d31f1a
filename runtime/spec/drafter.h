#pragma once
// Drafting: propose a tree of candidate continuations for one step, and learn from what the
// target accepted. Model drafters, PLD, SAM-Decoding, ReSpec and AdaPLD implement this.
#include <cstdint>
#include <string>
#include <vector>

#include "spec/acceptor.h"
#include "spec/draft_budget.h"
#include "spec/draft_tree.h"

namespace specd {

struct DraftRequest {
  // Every committed token: prompt and generated text, the root excluded.
  const std::vector<int32_t>& committed;
  int32_t root_token;        // the bonus token that starts this step's tree
  int32_t max_nodes;         // drafted nodes allowed besides the root (the verification budget)
  int32_t max_depth;         // deepest drafted node allowed (positions left in the context, etc.)
  // The cost-aware budget, or null. A drafter that knows its proposal's class before drafting
  // (limits_itself) asks it how many nodes that class pays for.
  const DraftBudget* budget = nullptr;

  int32_t nodes_for(int32_t proposal_class) const {
    return budget ? budget->nodes_for(proposal_class, max_nodes, max_depth) : max_nodes;
  }
};

struct StepFeedback {
  const DraftTree& tree;
  const AcceptResult& result;
  // The tokens committed by the step: the accepted path's tokens (root first); next_token is not
  // committed yet (it is the next root).
  const std::vector<int32_t>& committed_now;
};

class Drafter {
 public:
  virtual ~Drafter() = default;
  virtual std::string name() const = 0;
  // Called once per request with the prompt, before the first propose.
  virtual void begin(const std::vector<int32_t>& prompt) = 0;
  virtual DraftTree propose(const DraftRequest& request) = 0;
  virtual void observe(const StepFeedback& feedback) = 0;
  // A label for the kind of the last proposal (PLD: the matched n-gram length), so that the
  // draft budget can keep an acceptance estimate per kind. One kind by default. Class 0 is the
  // one a draft model drafts in (its cost per node starts at the model's step); classes above 0
  // are retrieval, which starts at no cost.
  virtual int32_t proposal_class() const { return 0; }
  // True when propose() limits itself with DraftRequest::nodes_for once it knows its class
  // (retrieval drafters: the class is the match found). Otherwise the engine limits max_nodes to
  // what class 0 pays for before proposing.
  virtual bool limits_itself() const { return false; }
};

}  // namespace specd
