#pragma once
// ReSpec's drafter (the ReSpec paper §3.1-3.3, Algorithm 1): over the text X = committed tokens + the
// step's root, choose the key k* among the last k = 1..l tokens of X by the target's entropies
// (respec_retrieval.h's choose_key); when H_min <= theta_entropy and the key occurred earlier in
// X, retrieve every earlier occurrence, keep those whose EMA score passes theta_score, and draft
// the continuations of the best `candidates` as one trie of Retrieval nodes (q = 1). After
// verification the selected positions' scores learn from the outcome (lines 21-28). Otherwise a
// fallback drafter (the draft model's tree) drafts the step; without one, the root alone.
#include <cstdint>
#include <string>
#include <vector>

#include "speculative/drafter.h"
#include "speculative/respec_options.h"
#include "speculative/respec_retrieval.h"

namespace specd {

class RespecDrafter : public FallbackDrafter {
 public:
  // `fallback` (not owned, may be null) sees every begin() and observe(), whoever drafted.
  explicit RespecDrafter(RespecOptions options, Drafter* fallback = nullptr);
  std::string name() const override { return "respec"; }
  void begin(const std::vector<int32_t>& prompt, uint64_t seed) override;
  DrafterNeeds needs() const override;
  void observe_prefill(const TargetOutputs& prefill) override;
  void observe(const StepFeedback& feedback) override;
  // 1 + k* for a retrieved draft, 0 for the fallback's.
  int32_t proposal_class() const override { return last_class_; }
  // Class 0 is the draft-model fallback's proposal (a stale value only goes with an empty tree).
  int64_t last_catch_up() const override { return last_class_ == 0 && fallback_ ? fallback_->last_catch_up() : 0; }
  bool limits_itself() const override { return true; }
  DraftingDetail step_detail() const override;

  const EmaScores& scores() const { return scores_; }
  // Of the last proposal: its decision ("retrieve", "entropy": H_min above theta_entropy or
  // unknown, "no-key": the key never occurred, "low-score": no position passed theta_score,
  // "no-budget": retrieval with no node to spend), the key and
  // the selected end positions in rank order.
  const std::string& last_trigger() const { return trigger_; }
  const KeyChoice& last_key() const { return key_; }
  const std::vector<int32_t>& last_selected() const { return selected_; }

 private:
  DraftTree draft(const DraftRequest& request, std::unique_ptr<DraftRounds>* rounds) override;
  void append(int32_t token, double entropy);
  void sync(const std::vector<int32_t>& committed);
  std::vector<double> recent_entropies() const;

  RespecOptions options_;
  Drafter* fallback_;
  NgramPositions index_;
  std::vector<double> entropies_;  // per committed position: the target's entropy after it; NaN unknown
  EmaScores scores_;
  // The last proposal.
  std::string trigger_;
  KeyChoice key_;
  int32_t matches_ = 0;
  std::vector<int32_t> selected_;
  std::vector<std::vector<int32_t>> chains_;  // per selected position: its nodes, depth 1 first
  int32_t last_class_ = 0;
  double winner_r_ = -1;  // R of the last update's winner; < 0 when none
};

}  // namespace specd
