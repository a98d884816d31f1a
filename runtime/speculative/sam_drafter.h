#pragma once
// SAM-Decoding's dynamic drafter (Hu et al., arXiv:2411.10666): a suffix automaton
// over prompt + committed tokens finds the longest suffix of committed text + root that occurred
// before; when that match is long enough, the tokens after its earliest occurrence are the draft
// (a chain of Retrieval nodes, q = 1). Otherwise another drafter (in SAM-Decoding, the EAGLE-2 or
// Token Recycling tree) drafts this step. The static, corpus-built automaton is not part of this.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "speculative/drafter.h"
#include "speculative/sam_corpus.h"
#include "speculative/suffix_automaton.h"

namespace specd {

struct SamOptions {
  // Draft length counting the root, as SAM-Decoding's n_predicts (samd_config.py, eval scripts:
  // 40), so at most n_predicts - 1 drafted tokens. Unlike the reference, drafts are not padded,
  // and a request budget below n_predicts - 1 lowers it for that step (to_anc then trades match
  // length only for tokens that will actually be verified).
  int32_t n_predicts = 40;
  // Shortest match (root included) drafted from the automaton; shorter ones go to the fallback
  // (len_threshold = 5 in samd_config.py and the eval scripts).
  int32_t len_threshold = 5;
  // With a static corpus: its match length counts this much less when compared with the
  // threshold and with the dynamic match (len_bias = 5 in samd_config.py; ties go to the
  // dynamic automaton, as in the reference).
  int32_t len_bias = 5;
};

// Throws InputError naming the option when a value is out of range.
void validate(const SamOptions& options);

class SamDrafter : public FallbackDrafter {
 public:
  // `fallback` (not owned, may be null: then a short match yields the root alone) drafts when the
  // match is short. It sees every begin() and observe(), whoever drafted, so its own state (a
  // draft model's KV cache, for instance) stays in step with the committed text.
  // `corpus` (not owned, may be null) is the static automaton, consulted beside the dynamic one.
  explicit SamDrafter(SamOptions options = {}, Drafter* fallback = nullptr, const StaticSam* corpus = nullptr);
  std::string name() const override { return "sam"; }
  void begin(const std::vector<int32_t>& prompt, uint64_t seed) override;
  void observe(const StepFeedback& feedback) override;
  // 0 for the fallback's drafts, else the match length (root included) capped at 16, plus
  // kStaticClass for a draft from the static corpus.
  int32_t proposal_class() const override { return last_class_; }
  // Class 0 is the draft-model fallback's proposal (a stale value only goes with an empty tree).
  int64_t last_catch_up() const override { return last_class_ == 0 && fallback_ ? fallback_->last_catch_up() : 0; }
  static constexpr int32_t kStaticClass = 32;
  bool limits_itself() const override { return true; }

  const SamOptions& options() const { return options_; }
  const SuffixAutomaton& automaton() const { return automaton_; }
  // Of the last proposal (for traces): the match length, root included, and whether the
  // fallback was asked to draft.
  int32_t last_match_length() const { return last_match_length_; }
  bool last_used_fallback() const { return last_used_fallback_; }

 private:
  DraftTree draft(const DraftRequest& request, std::unique_ptr<DraftRounds>* rounds) override;
  // Brings the automaton to `committed` (observe() normally did it already; this checks the
  // length and last token, and rebuilds when they disagree).
  void sync(const std::vector<int32_t>& committed);
  // Committed tokens: into the dynamic automaton, and through the corpus's match cursor.
  void commit(const int32_t* first, const int32_t* last);

  SamOptions options_;
  Drafter* fallback_;
  const StaticSam* corpus_;
  SuffixAutomaton::Match corpus_match_;  // the committed text's longest suffix found in the corpus
  SuffixAutomaton automaton_;
  std::vector<int32_t> draft_;  // scratch
  int32_t last_match_length_ = 0;
  bool last_used_fallback_ = false;
  int32_t last_class_ = 0;
};

}  // namespace specd
