#include "spec/sam_drafter.h"

#include <algorithm>

#include "util/error.h"

namespace specd {

void validate(const SamOptions& options) {
  if (options.n_predicts < 2) input_error("sam", "n_predicts must be at least 2 (it counts the root)");
  if (options.len_threshold < 1) input_error("sam", "len_threshold must be at least 1");
}

SamDrafter::SamDrafter(SamOptions options, Drafter* fallback) : options_(options), fallback_(fallback) {
  validate(options_);
}

void SamDrafter::begin(const std::vector<int32_t>& prompt) {
  automaton_.clear();
  automaton_.reserve(prompt.size() + 1024);
  for (int32_t token : prompt) automaton_.append(token);
  last_match_length_ = 0;
  last_used_fallback_ = false;
  if (fallback_) fallback_->begin(prompt);
}

void SamDrafter::observe(const StepFeedback& feedback) {
  // Only committed tokens enter the automaton; the next root waits until it is committed.
  for (int32_t token : feedback.committed_now) automaton_.append(token);
  if (fallback_) fallback_->observe(feedback);
}

void SamDrafter::sync(const std::vector<int32_t>& committed) {
  const std::vector<int32_t>& text = automaton_.text();
  const size_t seen = text.size();
  if (seen > committed.size() || (seen > 0 && text.back() != committed[seen - 1])) {
    automaton_.clear();
    automaton_.reserve(committed.size() + 1024);
  }
  for (size_t i = automaton_.text().size(); i < committed.size(); ++i) automaton_.append(committed[i]);
}

DraftTree SamDrafter::propose(const DraftRequest& request) {
  sync(request.committed);
  const SuffixAutomaton::Match match = automaton_.lookup(request.root_token);
  last_match_length_ = match.length;
  last_used_fallback_ = false;
  const int32_t budget = std::min(request.max_nodes, request.max_depth);
  if (budget <= 0) return DraftTree(request.root_token);

  if (match.length >= options_.len_threshold) {
    // to_anc looks for an occurrence followed by enough tokens; never ask for more than the
    // budget lets us verify, or it would trade a longer match for tokens we would cut anyway.
    const int32_t limit = std::min(budget, request.nodes_for(std::min(match.length, 16)));
    if (limit <= 0) return DraftTree(request.root_token);
    automaton_.continuation(match, std::min(options_.n_predicts, limit + 1), draft_);
    // The continuation can only be empty with len_threshold 1 (the root occurs once, last).
    if (!draft_.empty()) {
      DraftTree tree(request.root_token);
      int32_t parent = 0;
      for (int32_t token : draft_) parent = tree.add(parent, token, DraftSource::Retrieval, 1.0f);
      return tree;
    }
  }
  last_used_fallback_ = true;
  DraftRequest fallback_request = request;
  fallback_request.max_nodes = request.nodes_for(0);  // what the fallback's drafts pay for
  if (fallback_request.max_nodes == 0) fallback_request.max_depth = 0;
  if (fallback_ && fallback_request.max_nodes > 0) return fallback_->propose(fallback_request);
  return DraftTree(request.root_token);
}

}  // namespace specd
