#include "speculative/pld_drafter.h"

#include <algorithm>

#include "speculative/method_params.h"
#include "util/error.h"

namespace specd {

namespace {

uint64_t mix64(uint64_t x) {  // splitmix64's finaliser
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

uint64_t hash_ngram(const int32_t* tokens, int32_t n) {
  uint64_t h = static_cast<uint64_t>(n);
  for (int32_t i = 0; i < n; ++i) h = mix64(h ^ static_cast<uint32_t>(tokens[i]));
  return h;
}

}  // namespace

// Each value's range is the parameter table's (method_params.cpp); this adds how they relate.
void validate(const PldOptions& pld) {
  MethodOptions options;
  options.pld = pld;
  check_params(options, "pld", "pld");
  if (pld.max_ngram < pld.min_ngram) input_error("pld", "max_ngram must be at least min_ngram");
}

PldDrafter::PldDrafter(PldOptions options) : options_(options) {
  validate(options_);
  positions_.resize(options_.max_ngram - options_.min_ngram + 1);
}

void PldDrafter::begin(const std::vector<int32_t>& prompt, uint64_t seed) {
  text_.clear();
  for (auto& index : positions_) index.clear();
  last_ngram_ = 0;
  text_.reserve(prompt.size() + 1024);
  for (int32_t token : prompt) append(token);
}

void PldDrafter::observe(const StepFeedback& feedback) {
  for (int32_t token : feedback.committed_now) append(token);
}

void PldDrafter::append(int32_t token) {
  text_.push_back(token);
  const int32_t end = static_cast<int32_t>(text_.size());  // the new windows end here
  for (int32_t n = options_.min_ngram; n <= options_.max_ngram && n <= end; ++n) {
    const int32_t start = end - n;
    positions_[n - options_.min_ngram][hash_ngram(text_.data() + start, n)].push_back(start);
  }
}

void PldDrafter::sync(const std::vector<int32_t>& committed) {
  const size_t seen = text_.size();
  if (seen > committed.size() || (seen > 0 && text_.back() != committed[seen - 1])) {
    begin(committed, 0);  // not the same text any more: rebuild (PLD draws nothing at random)
    return;
  }
  for (size_t i = seen; i < committed.size(); ++i) append(committed[i]);
}

int32_t PldDrafter::find_match(int32_t n) const {
  const auto& index = positions_[n - options_.min_ngram];
  const int32_t* pattern = pattern_.data() + pattern_.size() - n;
  const auto found = index.find(hash_ngram(pattern, n));
  if (found == index.end()) return -1;
  const std::vector<int32_t>& starts = found->second;

  // The searched sequence is S = text_ + root, of length L. Every indexed window lies in text_, so
  // the pattern's own window (which ends with the root) is never a candidate. The validity rules
  // are upper bounds on the start, so the valid windows are a prefix of `starts`.
  const int64_t L = static_cast<int64_t>(text_.size()) + 1;
  const int64_t last_valid = options_.allow_truncated
                                 ? L - n - 1  // continuation starts before the end of S
                                 : std::min(L - n - options_.num_pred_tokens, L - 2 * int64_t{n} - 1);
  auto same = [&](int32_t start) { return std::equal(pattern, pattern + n, text_.data() + start); };

  if (options_.match == PldMatch::Earliest) {
    for (int32_t start : starts) {
      if (start > last_valid) return -1;
      if (same(start)) return start;
    }
    return -1;
  }
  auto it = std::upper_bound(starts.begin(), starts.end(), last_valid,
                             [](int64_t bound, int32_t start) { return bound < start; });
  while (it != starts.begin()) {
    --it;
    if (same(*it)) return *it;
  }
  return -1;
}

DraftTree PldDrafter::propose(const DraftRequest& request) {
  sync(request.committed);
  last_ngram_ = 0;
  DraftTree tree(request.root_token);
  const int32_t budget = std::min(request.max_nodes, request.max_depth);
  const int32_t committed_length = static_cast<int32_t>(text_.size());
  const int32_t longest = std::min(options_.max_ngram, committed_length);
  if (budget <= 0 || longest < options_.min_ngram) return tree;

  // The longest pattern: the last longest-1 committed tokens, then the root.
  pattern_.assign(text_.end() - (longest - 1), text_.end());
  pattern_.push_back(request.root_token);

  for (int32_t n = longest; n >= options_.min_ngram; --n) {
    const int32_t start = find_match(n);
    if (start < 0) continue;
    const int32_t from = start + n;
    int32_t to = from + options_.num_pred_tokens;
    if (options_.allow_truncated) to = std::min(to, committed_length + 1);
    to = std::min(to, from + std::min(budget, request.nodes_for(n)));
    int32_t parent = 0;
    for (int32_t i = from; i < to; ++i) {
      const int32_t token = i < committed_length ? text_[i] : request.root_token;
      parent = tree.add(parent, token, DraftSource::Retrieval, 1.0f);
    }
    last_ngram_ = n;
    return tree;
  }
  return tree;
}

}  // namespace specd
