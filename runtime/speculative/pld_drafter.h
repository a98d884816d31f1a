#pragma once
// Prompt Lookup Decoding (Saxena, 2023; no paper, a reference implementation): find the last n tokens of
// committed text + root earlier in that text, longest n first, and draft the tokens that followed
// the match as a chain. Retrieval only, so every node has q = 1 (the point-mass rule applies).
//
// An index from each n-gram to its start positions, kept up to date token by token, replaces the
// reference's rescan of the whole sequence: a proposal costs a few hash look-ups, whatever the
// context length.
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "speculative/drafter.h"

namespace specd {

enum class PldMatch : uint8_t {
  Earliest,  // the first occurrence in the text wins (original PLD, HF, Spec-Bench)
  Latest,    // the most recent occurrence wins (closer context; some later variants)
};

struct PldOptions {
  int32_t max_ngram = 3;         // longest pattern tried first (original README, Spec-Bench: 3; HF: 2)
  int32_t min_ngram = 1;         // shortest pattern tried (all references go down to 1)
  int32_t num_pred_tokens = 10;  // tokens copied after the match (original, Spec-Bench, HF: 10)
  PldMatch match = PldMatch::Earliest;
  // true (HF): accept a match whose continuation runs into the end of the text and copy what
  // there is. false (original README): skip matches without a full num_pred_tokens continuation
  // and matches that overlap the pattern itself (start + n >= L - n).
  bool allow_truncated = true;
};

// Throws InputError naming the option when a value is out of range.
void validate(const PldOptions& options);

class PldDrafter : public Drafter {
 public:
  explicit PldDrafter(PldOptions options = {});
  std::string name() const override { return "pld"; }
  void begin(const std::vector<int32_t>& prompt, uint64_t seed) override;
  DraftTree propose(const DraftRequest& request) override;
  void observe(const StepFeedback& feedback) override;
  int32_t proposal_class() const override { return last_ngram_; }
  bool limits_itself() const override { return true; }

  const PldOptions& options() const { return options_; }
  // Pattern length of the last proposal's match, 0 when nothing matched (for traces).
  int32_t last_ngram() const { return last_ngram_; }

 private:
  void append(int32_t token);
  // Brings the index to `committed` (the request is the source of truth; observe() normally did
  // the work already, so this is a length and last-token check).
  void sync(const std::vector<int32_t>& committed);
  // Start (in text_) of the chosen occurrence of the last n tokens of pattern_, or -1.
  int32_t find_match(int32_t n) const;

  PldOptions options_;
  std::vector<int32_t> text_;  // committed tokens seen so far
  // positions_[n - min_ngram]: hash of an n-gram of text_ -> its start positions, ascending.
  // Hash collisions are harmless: every candidate window is compared with the pattern.
  std::vector<std::unordered_map<uint64_t, std::vector<int32_t>>> positions_;
  std::vector<int32_t> pattern_;  // scratch: the longest pattern of the current proposal
  int32_t last_ngram_ = 0;
};

}  // namespace specd
