#include "speculative/sam_drafter.h"

#include <algorithm>

#include "speculative/method_params.h"

namespace specd {

// The ranges are the parameter table's (method_params.cpp).
void validate(const SamOptions& sam) {
  MethodOptions options;
  options.sam = sam;
  check_params(options, "sam", "sam");
}

SamDrafter::SamDrafter(SamOptions options, Drafter* fallback, const StaticSam* corpus)
    : options_(options), fallback_(fallback), corpus_(corpus) {
  validate(options_);
}

void SamDrafter::begin(const std::vector<int32_t>& prompt, uint64_t seed) {
  automaton_.clear();
  automaton_.reserve(prompt.size() + 1024);
  corpus_match_ = {};
  commit(prompt.data(), prompt.data() + prompt.size());
  last_match_length_ = 0;
  last_used_fallback_ = false;
  if (fallback_) fallback_->begin(prompt, seed);
}

void SamDrafter::observe(const StepFeedback& feedback) {
  // Only committed tokens enter the automaton; the next root waits until it is committed.
  const std::vector<int32_t>& now = feedback.committed_now;
  commit(now.data(), now.data() + now.size());
  if (fallback_) fallback_->observe(feedback);
}

void SamDrafter::commit(const int32_t* first, const int32_t* last) {
  for (const int32_t* token = first; token != last; ++token) {
    automaton_.append(*token);
    if (corpus_) corpus_match_ = corpus_->automaton().transfer(corpus_match_, *token);
  }
}

void SamDrafter::sync(const std::vector<int32_t>& committed) {
  const std::vector<int32_t>& text = automaton_.text();
  const size_t seen = text.size();
  if (seen > committed.size() || (seen > 0 && text.back() != committed[seen - 1])) {
    automaton_.clear();
    automaton_.reserve(committed.size() + 1024);
    corpus_match_ = {};
  }
  commit(committed.data() + automaton_.text().size(), committed.data() + committed.size());
}

DraftTree SamDrafter::draft(const DraftRequest& request, std::unique_ptr<DraftRounds>* rounds) {
  sync(request.committed);
  const SuffixAutomaton::Match match = automaton_.lookup(request.root_token);
  // The static corpus's match, its length lowered by len_bias (SAM-Decoding's DraftModel.lookup).
  const SuffixAutomaton::Match corpus_hit = corpus_ ? corpus_->automaton().transfer(corpus_match_, request.root_token)
                                                    : SuffixAutomaton::Match{};
  const int32_t corpus_length = corpus_hit.length - options_.len_bias;
  const bool from_corpus = corpus_length > match.length;  // ties go to the dynamic automaton
  last_match_length_ = from_corpus ? corpus_hit.length : match.length;
  last_used_fallback_ = false;
  last_class_ = std::min(last_match_length_, 16) + (from_corpus ? kStaticClass : 0);
  const int32_t budget = std::min(request.max_nodes, request.max_depth);
  if (budget <= 0) return DraftTree(request.root_token);

  if (std::max(match.length, corpus_length) >= options_.len_threshold) {
    // to_anc looks for an occurrence followed by enough tokens; never ask for more than the
    // budget lets us verify, or it would trade a longer match for tokens we would cut anyway.
    const int32_t limit = std::min(budget, request.nodes_for(last_class_));
    if (limit <= 0) return DraftTree(request.root_token);
    const SuffixAutomaton& source = from_corpus ? corpus_->automaton() : automaton_;
    source.continuation(from_corpus ? corpus_hit : match, std::min(options_.n_predicts, limit + 1), draft_,
                        /*to_anc=*/!from_corpus);  // as the reference: the static draft may run past a document's end
    // The continuation can only be empty with len_threshold 1 (the root occurs once, last).
    if (!draft_.empty()) {
      DraftTree tree(request.root_token);
      int32_t parent = 0;
      for (int32_t token : draft_) parent = tree.add(parent, token, DraftSource::Retrieval, 1.0f);
      return tree;
    }
  }
  last_used_fallback_ = true;
  last_class_ = 0;
  DraftRequest fallback_request = request;
  // What the fallback's drafts pay for, its catch-up with the text included.
  fallback_request.max_nodes = fallback_ ? request.model_nodes(fallback_->first_round_rows(request.committed)) : 0;
  if (fallback_request.max_nodes == 0) fallback_request.max_depth = 0;
  if (fallback_ && fallback_request.max_nodes > 0) return propose_fallback(*fallback_, fallback_request, rounds);
  return DraftTree(request.root_token);
}

}  // namespace specd
