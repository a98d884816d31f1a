#pragma once
// AdaPLD (Liu et al., arXiv:2606.05742, §3, Algorithm 1): model-free drafting from the memory
// M = committed tokens + the step's root. The root a is the query anchor, at position |M| - 1.
//  * Retrieval: lexical anchors are earlier positions j < |M| - 1 with M_j = a (each has a
//    following token); only when there is none, semantic anchors: positions whose token's input
//    embedding has cosine >= tau_sim with a's.
//  * Reranking: s(j) = cos(h_{j-1}, h_{|M|-2}) at one layer of the target's hidden states (j = 0
//    has no h_{j-1}: score -inf); the argmax wins, ties to the latest position.
//  * Tree: on a lexical hit the main copy path M_{j*+1..} (DraftSource::Retrieval, up to L
//    tokens); K branch tokens at depth 1 from the target's top-K at j* (the distribution
//    p(. | M_<=j*), its logits row kept from the forward that produced it), the main path's first
//    token excluded (DraftSource::Branch); one successor per branch (DraftSource::Successor):
//    the same lexical-first retrieval with the branch token b as the query, candidates t
//    reranked by cos(h_{t-1}, h_{j*}), extended by M_{t+1}. Every node has q = 1 (lossless with
//    SamplingAcceptor's point-mass rule).
//  * Budget (N nodes from DraftRequest::nodes_for, depth from max_depth): the main path first,
//    then the branches in top-K order, then successors in branch order. The cost-aware budget
//    sizes N for a chain (its acceptance estimates are per proposal_class(): the lexical
//    agreement length, semantic, none), and on the demo pair the copy path's later tokens are
//    accepted far more often than branches (in one quick bench over code editing and
//    summarization, main path first: MAT 1.78; main path and branches alternating: 1.66).
//    A budget of L + 2K holds the paper's whole tree.
//  * With a cost-aware budget, a branch or successor also has to pay for its own row: the chain's
//    estimates would price it as the path's next level, where a branch is accepted only when the
//    target now prefers another of the anchor's top-K (on the large demo pair 1 branch in 120
//    under lexical anchors, 1 in 15 under semantic ones, where on the Xeon, whose cache holds
//    the target, a verified row costs a tenth to a fifth of a step). Each node is added while the step's expected tokens per
//    millisecond (DraftBudget::rate_of) rise with it, priced by its own acceptance rate, learned
//    per node from the steps (branches under lexical and under semantic anchors apart, successors
//    given their branch) with the budget's prior. The rates are kept across requests (they are
//    the pair's and the workload's) and forget with the steps (a half-life of about 140), so a kind
//    switched off drifts back towards the prior and is tried again later. Without a budget every
//    branch the node count allows is drafted, as in the paper.
//  * No anchor at all: the root alone (an AR step).
// The target's top-(K+1) per committed position and its layer-l hidden states are kept as the
// forwards produce them (prefill rows, then each step's committed path rows); nothing re-runs
// the prefix. With a LogitsLookup, the prefill returns the last layer's states instead of every
// prompt row's logits, and a prompt position's top-(K+1) is computed when it first becomes an
// anchor: one row through the output head instead of the whole prompt (a vocabulary-wide
// projection per prompt token cost ~3 ms a request on the demo target, ~20% of its decoding).
#include <cstdint>
#include <limits>
#include <string>
#include <unordered_map>
#include <vector>

#include "speculative/adapld_options.h"
#include "speculative/drafter.h"
#include "speculative/embedding_lookup.h"

namespace specd {

// Skipped: no lexical anchor, and the semantic search was not run (its class got no nodes).
enum class AdaPldRetrieval : uint8_t { None, Lexical, Semantic, Skipped };
const char* adapld_retrieval_name(AdaPldRetrieval retrieval);

class AdaPldDrafter : public Drafter {
 public:
  static constexpr int32_t kSemanticClass = 4;
  // layer: the resolved hidden-state layer (Hugging Face numbering, >= 0). embeddings: the
  // target's input embedding rows (unused, and may be empty, when options.semantic is false).
  AdaPldDrafter(AdaPldOptions options, int32_t layer, EmbeddingLookup embeddings, std::string name = "adapld",
                LogitsLookup logits = {});

  std::string name() const override { return name_; }
  void begin(const std::vector<int32_t>& prompt, uint64_t seed) override;
  DrafterNeeds needs() const override;
  void observe_prefill(const TargetOutputs& prefill) override;
  DraftTree propose(const DraftRequest& request) override;
  void observe(const StepFeedback& feedback) override;
  // Lexical hit: 1 to 3, how many tokens before and at the anchor equal those before and at the
  // root; 4: semantic hit, or the semantic search skipped; 5: no anchor (an AR step).
  int32_t proposal_class() const override;
  bool limits_itself() const override { return true; }
  DraftingDetail step_detail() const override;

  // The parts, public for the brute-force tests. Positions index the memory M = text() + root;
  // `end` = |M| - 1 is the query's own position: candidates are positions j < end.
  struct Candidates {
    AdaPldRetrieval kind = AdaPldRetrieval::None;
    std::vector<int32_t> positions;  // ascending
  };
  // semantic = false: lexical anchors only (as when options.semantic is off).
  Candidates retrieve(int32_t query, int32_t end, bool semantic = true) const;
  // The candidate maximising cos(h_{j-1}, h_{reference}) (j = 0 and positions without a kept
  // state score -inf; cosine with a zero vector is 0); ties to the latest position; -1 when empty.
  int32_t rerank(const std::vector<int32_t>& positions, int32_t reference) const;
  double score(int32_t position, int32_t reference) const;
  // The target's top-(K+1) next-token ids at committed position p, best first (ties: lower id);
  // empty when the row was not kept. A prompt position's ids come through the LogitsLookup the
  // first time they are asked for.
  const std::vector<int32_t>& top_ids(int32_t position);
  const std::vector<int32_t>& text() const { return text_; }

 private:
  void append(int32_t token, const float* logits_row, int64_t vocab, const float* hidden_row, int64_t hidden_size);
  void sync(const std::vector<int32_t>& committed);
  // Cosines between the query's embedding and every distinct token seen, in first-seen order;
  // extended as new tokens appear, so a fallback costs one pass over the new distinct tokens.
  const std::vector<float>& embedding_cosines(int32_t query) const;
  // The token's slot in embedding_rows_ (its row fetched once: the lookup goes through the model)
  // and its norm.
  int32_t embedding_slot(int32_t token, float* norm) const;

  AdaPldOptions options_;
  int32_t layer_;
  EmbeddingLookup embeddings_;
  std::string name_;
  LogitsLookup logits_;

  std::vector<int32_t> text_;                                 // committed tokens
  std::unordered_map<int32_t, std::vector<int32_t>> where_;   // token -> its positions in text_, ascending
  std::vector<int32_t> distinct_;                             // tokens of text_ in first-seen order
  std::vector<int32_t> distinct_index_;                       // per position: its token's index in distinct_
  std::vector<std::vector<int32_t>> top_;                     // per position: top-(K+1) ids
  std::vector<float> hidden_;                                 // per position: hidden_size floats
  std::vector<float> hidden_norm_;                            // per position; < 0: no state kept
  int64_t hidden_size_ = 0;
  // The last layer's output at prompt positions [0, final_rows_) (with a LogitsLookup), from
  // which their top-(K+1) is computed on first use.
  std::vector<float> final_hidden_;
  int64_t final_rows_ = 0;
  std::vector<float> logits_row_;
  // Semantic fallback caches: per token seen its embedding row and norm (slot in embedding_rows_),
  // per query its cosines with distinct_.
  mutable std::unordered_map<int32_t, int32_t> embedding_slot_;
  mutable std::vector<float> embedding_rows_, embedding_norms_;
  mutable std::unordered_map<int32_t, std::vector<float>> cosines_;
  mutable std::vector<int32_t> distinct_slots_;  // per distinct_ entry (a prefix of it): its slot

  // Acceptance of drafted branch and successor nodes: decayed counts (see the budget bullet above).
  struct NodeRate {
    double accepted = 0, tried = 0;
    double estimate(const DraftBudgetOptions& prior) const;
    void add(bool accepted_now);
  };
  NodeRate& branch_rate(bool lexical) { return branch_rates_[lexical ? 0 : 1]; }
  NodeRate branch_rates_[2];  // under lexical, semantic anchors
  NodeRate successor_rate_;   // given the branch was accepted

  // The last step, for proposal_class() and the trace.
  AdaPldRetrieval retrieval_ = AdaPldRetrieval::None;
  int32_t candidates_ = 0, anchor_ = -1, main_ = 0, branches_ = 0, successors_ = 0, agreement_ = 1;
  std::string reuse_ = "none";
};

}  // namespace specd
