#pragma once
// Drafting: propose a tree of candidate continuations for one step, and learn from what the
// target accepted. Model drafters, PLD, SAM-Decoding, ReSpec and AdaPLD implement this.
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "model/llama_model.h"
#include "speculative/acceptor.h"
#include "speculative/draft_budget.h"
#include "speculative/draft_tree.h"

namespace specd {

struct DraftRequest {
  // Every committed token: prompt and generated text, the root excluded.
  const std::vector<int32_t>& committed;
  int32_t root_token;        // the bonus token that starts this step's tree
  int32_t max_nodes;         // drafted nodes allowed besides the root (the verification budget)
  int32_t max_depth;         // deepest drafted node allowed (positions left in the context, etc.)
  // The cost-aware budget, or null. A drafter that knows its proposal's class before drafting
  // (limits_itself) asks it how many nodes that class pays for.
  DraftBudget* budget = nullptr;
  int64_t remaining_tokens = INT64_MAX;  // the most tokens the request may still emit
  // False: this step runs no draft-model forward (a server's drafting guard, serve/drafting_guard.h):
  // a drafter with a draft-model fallback drafts from retrieval only, a draft model not at all.
  bool model = true;

  int32_t nodes_for(int32_t proposal_class) const {
    return budget ? budget->nodes_for(proposal_class, max_nodes, max_depth) : max_nodes;
  }
  // Nodes a draft model's proposal pays for, its first forward running `first_rows` rows
  // (Drafter::first_round_rows: its catch-up with the text and the root).
  int32_t model_nodes(int64_t first_rows) const {
    if (!model) return 0;
    return budget ? budget->model_nodes(max_nodes, max_depth, first_rows, remaining_tokens) : max_nodes;
  }
};

// What a drafter asks the engine for besides the committed tokens (Drafter::needs). The engine
// computes only what some drafter asks for: each costs a pass over the vocabulary or a copy of
// hidden states per position.
struct DrafterNeeds {
  bool target_logits = false;       // the target's logits rows of the verified tree
  bool target_entropy = false;      // the target's entropy (nats, T = 1) after each committed token
  std::vector<int> hidden_layers;   // the target's hidden states of these layers (see ForwardRequest)
  bool prefill = false;             // the same for every prompt position, once, before drafting
  // With prefill: only the last prefill_rows prompt positions (0: all). ReSpec's trigger needs the
  // entropies of the last l positions, and skipping the other rows' logits saves a vocabulary-wide
  // projection per prompt token.
  int32_t prefill_rows = 0;
  // With prefill and target_logits: logits for only the last prefill_logits_rows of those rows
  // (0: all of them); the hidden states stay those of every prefill row. AdaPLD keeps every
  // prompt row's states and projects a row to the vocabulary only when it becomes an anchor.
  // Not with target_entropy, which needs every row's logits.
  int32_t prefill_logits_rows = 0;
};

// The target's outputs at positions it has just run: rows in position order (at the prefill, the
// last prefill_rows prompt positions when that is set). Only the parts the drafter's needs() asked
// for are filled.
struct TargetOutputs {
  const float* logits = nullptr;    // [rows, vocab] when target_logits (verify: one row per tree node)
  int64_t rows = 0, vocab = 0;
  std::vector<float> entropies;     // per committed position (target_entropy)
  // Per asked layer, [committed positions, hidden_size] row-major (hidden_layers).
  std::vector<std::vector<float>> hidden;
  int64_t hidden_size = 0;
};

struct StepFeedback {
  const DraftTree& tree;
  const AcceptResult& result;
  // The tokens committed by the step: the accepted path's tokens (root first); next_token is not
  // committed yet (it is the next root).
  const std::vector<int32_t>& committed_now;
  // The target's outputs: logits for every tree node, entropies and hidden states for the
  // committed path (root first), as needs() asked.
  const TargetOutputs& target;
};

// A proposal drafted in rounds of draft-model forwards that the caller runs, so that a server can
// batch every request's round into one forward of the draft model (LlamaModel::forward_batch):
// while next() gives a forward, run it on cache() with model() and feed() its result; then tree()
// is the proposal, as propose() would have made it.
// The most drafted nodes a proposal will hold and its deepest level, known before its rounds run:
// what a batched step plans for (the other requests' budgets weigh its rows and expected tokens).
struct DraftShape {
  int32_t nodes = 0, depth = 0;
};

class DraftRounds {
 public:
  virtual ~DraftRounds() = default;
  virtual DraftShape shape() const = 0;
  virtual const ForwardRequest* next() = 0;  // null once the tree is complete
  virtual const LlamaModel& model() const = 0;
  virtual KvCache& cache() = 0;
  virtual void feed(ForwardResult result) = 0;
  virtual DraftTree tree() = 0;
};

// A proposal made at once (a retrieval drafter's match): rounds with no forward to run.
class ReadyRounds : public DraftRounds {
 public:
  explicit ReadyRounds(DraftTree tree) : shape_{tree.size() - 1, tree.depth()}, tree_(std::move(tree)) {}
  DraftShape shape() const override { return shape_; }
  const ForwardRequest* next() override { return nullptr; }
  const LlamaModel& model() const override { throw std::logic_error("ReadyRounds: no draft forward to run"); }
  KvCache& cache() override { throw std::logic_error("ReadyRounds: no draft forward to run"); }
  void feed(ForwardResult) override { throw std::logic_error("ReadyRounds: no draft forward to run"); }
  DraftTree tree() override { return std::move(tree_); }

 private:
  DraftShape shape_;
  DraftTree tree_;
};

// The rounds run one after another, alone: what propose() is for a drafter that drafts in rounds.
inline DraftTree run_alone(DraftRounds& rounds) {
  while (const ForwardRequest* forward = rounds.next()) rounds.feed(rounds.model().forward(rounds.cache(), *forward));
  return rounds.tree();
}

class Drafter {
 public:
  virtual ~Drafter() = default;
  virtual std::string name() const = 0;
  // Called once per request with the prompt and the request's sampling seed, before the first
  // propose. A drafter that samples draws from a stream of this seed (apart from the target's),
  // so that the request's seed alone decides its randomness, however often the drafter is reused.
  virtual void begin(const std::vector<int32_t>& prompt, uint64_t seed) = 0;
  virtual DrafterNeeds needs() const { return {}; }
  // With needs().prefill: the target's outputs at every prompt position, after begin().
  virtual void observe_prefill(const TargetOutputs& prefill) {}
  virtual DraftTree propose(const DraftRequest& request) = 0;
  // The same proposal in rounds the caller runs (DraftRounds); null when this drafter drafts in
  // one go only (then the caller uses propose()).
  virtual std::unique_ptr<DraftRounds> propose_in_rounds(const DraftRequest& request) { return nullptr; }
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
  // What the last step's drafting decided beyond the tree, as named values (ReSpec: the trigger,
  // H_min, the key and its candidates; AdaPLD: the retrieval outcome and the reuse kind accepted),
  // read after observe(): the step trace's detail holds it as "drafting". Empty when there is none.
  virtual DraftingDetail step_detail() const { return {}; }
  // Committed tokens the last propose() fed a draft model before its first drafted node (beyond
  // the root): its catch-up with the text, the whole prompt on a request's first draft or the
  // tokens of steps it did not draft. 0 for retrieval. The draft budget learns a node's cost only
  // from proposals whose catch-up is short: a long one is the cost of the text, not of the nodes,
  // and counting it once would keep a draft model off for good.
  virtual int64_t last_catch_up() const { return 0; }
  // Rows the first draft-model forward of a proposal from `committed` would run now: its catch-up
  // with the text and the root (the whole prompt on a request's first draft). 0 for a drafter
  // without a draft model. A batch planner prices a draft with it.
  virtual int64_t first_round_rows(const std::vector<int32_t>& committed) const { return 0; }
};

// A retrieval drafter with a draft-model fallback (SAM, ReSpec). draft() makes the proposal; when
// it falls back and `rounds` is given, it puts the fallback's rounds there (propose_fallback) so
// that a server batches their forwards with other requests'. A retrieved draft needs no forward.
class FallbackDrafter : public Drafter {
 public:
  DraftTree propose(const DraftRequest& request) final { return draft(request, nullptr); }
  std::unique_ptr<DraftRounds> propose_in_rounds(const DraftRequest& request) final {
    std::unique_ptr<DraftRounds> rounds;
    DraftTree tree = draft(request, &rounds);
    if (rounds) return rounds;
    return std::make_unique<ReadyRounds>(std::move(tree));
  }

 protected:
  virtual DraftTree draft(const DraftRequest& request, std::unique_ptr<DraftRounds>* rounds) = 0;
  // The fallback's proposal: into `rounds` when given and the fallback drafts in rounds (then the
  // root alone is returned), else its tree.
  static DraftTree propose_fallback(Drafter& fallback, const DraftRequest& request, std::unique_ptr<DraftRounds>* rounds) {
    if (rounds && (*rounds = fallback.propose_in_rounds(request))) return DraftTree(request.root_token);
    return fallback.propose(request);
  }
};

}  // namespace specd
