#include "speculative/respec_drafter.h"

#include <algorithm>
#include <cmath>
#include <limits>


namespace specd {

RespecDrafter::RespecDrafter(RespecOptions options, Drafter* fallback)
    : options_(options), fallback_(fallback), index_(options.max_key), scores_(options.alpha, options.initial_score) {
  validate(options_);
}

DrafterNeeds RespecDrafter::needs() const {
  DrafterNeeds needs;
  needs.target_entropy = true;
  needs.prefill = true;
  needs.prefill_rows = options_.max_key;  // the trigger looks at the last l positions only
  return needs;
}

void RespecDrafter::begin(const std::vector<int32_t>& prompt, uint64_t seed) {
  index_.clear();
  entropies_.clear();
  scores_.clear();
  selected_.clear();
  chains_.clear();
  trigger_.clear();
  winner_r_ = -1;
  last_class_ = 0;
  for (int32_t token : prompt) append(token, std::numeric_limits<double>::quiet_NaN());
  if (fallback_) fallback_->begin(prompt, seed);
}

void RespecDrafter::observe_prefill(const TargetOutputs& prefill) {
  // The rows are the last prompt positions, in order.
  const size_t rows = prefill.entropies.size();
  const size_t n = entropies_.size();
  for (size_t i = 0; i < rows && i < n; ++i) entropies_[n - rows + i] = prefill.entropies[i];
}

void RespecDrafter::append(int32_t token, double entropy) {
  index_.append(token);
  entropies_.push_back(entropy);
}

void RespecDrafter::sync(const std::vector<int32_t>& committed) {
  const std::vector<int32_t>& text = index_.text();
  const size_t seen = text.size();
  if (seen > committed.size() || (seen > 0 && text.back() != committed[seen - 1])) {
    // Not the text we followed: rebuild it (entropies unknown; scores refer to old positions).
    index_.clear();
    entropies_.clear();
    scores_.clear();
  }
  for (size_t i = index_.text().size(); i < committed.size(); ++i) append(committed[i], std::numeric_limits<double>::quiet_NaN());
}

std::vector<double> RespecDrafter::recent_entropies() const {
  // The key's tokens X[n-k+1..n] were produced by the distributions after positions n-k..n-1.
  std::vector<double> recent;
  const int64_t n = static_cast<int64_t>(entropies_.size());
  for (int64_t i = n - 1; i >= std::max<int64_t>(0, n - options_.max_key) && !std::isnan(entropies_[i]); --i)
    recent.push_back(entropies_[i]);
  std::reverse(recent.begin(), recent.end());
  return recent;
}

DraftTree RespecDrafter::draft(const DraftRequest& request, std::unique_ptr<DraftRounds>* rounds) {
  sync(request.committed);
  selected_.clear();
  chains_.clear();
  matches_ = 0;
  winner_r_ = -1;
  last_class_ = 0;
  const std::vector<int32_t>& text = index_.text();
  const int32_t n = static_cast<int32_t>(text.size());  // X = text + root has n + 1 tokens
  const std::vector<double> recent = recent_entropies();
  key_ = choose_key(recent, options_.max_key, options_.lambda_e);
  if (options_.key_among_existing && key_.k > 0) {
    std::vector<bool> exists(options_.max_key + 1, false);
    std::vector<int32_t> suffix{request.root_token};  // key_k, built backwards
    for (int32_t k = 1; k <= options_.max_key && k <= static_cast<int32_t>(recent.size()) && k <= n + 1; ++k) {
      if (k > 1) suffix.insert(suffix.begin(), text[n - (k - 1)]);
      exists[k] = !index_.matches(suffix.data(), k).empty();
    }
    const KeyChoice existing = choose_key(recent, options_.max_key, options_.lambda_e, &exists);
    if (existing.k > 0) key_ = existing;  // none occurred: the paper's k* (it finds no key)
  }

  // The decision (Algorithm 1 line 14), and on retrieval the candidates.
  std::vector<int32_t> key;
  if (key_.k > 0) {
    key.assign(text.end() - (key_.k - 1), text.end());
    key.push_back(request.root_token);
  }
  if (key_.k == 0 || (options_.use_trigger && !(key_.h_min <= options_.theta_entropy))) {
    trigger_ = "entropy";
  } else {
    const std::vector<int32_t> positions = index_.matches(key.data(), key_.k);  // each has X[p + 1]
    matches_ = static_cast<int32_t>(positions.size());
    if (positions.empty()) {
      trigger_ = "no-key";
    } else {
      selected_ = select_candidates(positions, scores_, options_.theta_score, options_.candidates, options_.use_ema);
      trigger_ = selected_.empty() ? "low-score" : "retrieve";
    }
  }

  if (trigger_ == "retrieve") {
    last_class_ = 1 + key_.k;
    const int32_t budget = std::min({request.max_nodes, request.nodes_for(last_class_)});
    const int32_t depth = std::min(request.max_depth, options_.draft_length);
    DraftTree tree(request.root_token);
    std::vector<int32_t> kept;
    // Chains in rank order, merged into a trie: the best candidate's continuation first.
    for (int32_t p : selected_) {
      std::vector<int32_t> nodes;
      int32_t parent = 0;
      for (int32_t d = 1; d <= depth && p + d <= n; ++d) {
        const int32_t token = p + d < n ? text[p + d] : request.root_token;
        int32_t child = -1;
        for (int32_t c = parent + 1; c < tree.size(); ++c)
          if (tree.parents[c] == parent && tree.tokens[c] == token) {
            child = c;
            break;
          }
        if (child < 0) {
          if (tree.size() - 1 >= budget) break;
          child = tree.add(parent, token, DraftSource::Retrieval, 1.0f);
        }
        nodes.push_back(child);
        parent = child;
      }
      if (nodes.empty()) continue;  // the budget is spent: this position was not drafted
      kept.push_back(p);
      chains_.push_back(std::move(nodes));
    }
    selected_ = kept;
    if (!selected_.empty()) return tree;
    trigger_ = "no-budget";  // no node fits (the request's last token, or a budget of 0)
    last_class_ = 0;
    return tree;
  }

  DraftRequest fallback_request = request;
  fallback_request.max_nodes = fallback_ ? request.model_nodes(fallback_->first_round_rows(request.committed)) : 0;
  if (fallback_request.max_nodes == 0) fallback_request.max_depth = 0;
  if (fallback_ && fallback_request.max_nodes > 0 && fallback_request.max_depth > 0) return propose_fallback(*fallback_, fallback_request, rounds);
  return DraftTree(request.root_token);
}

void RespecDrafter::observe(const StepFeedback& feedback) {
  // EMA update of the selected positions (lines 21-28): the winner is the candidate whose chain
  // holds the deepest accepted node (ties: the best-ranked); R = its chain tokens on the accepted
  // path / its chain length as drafted; the others R = 0.
  if (!selected_.empty()) {
    const std::vector<int32_t>& path = feedback.result.path;
    const int32_t deepest = path.back();
    size_t winner = 0;
    for (size_t c = 0; c < chains_.size(); ++c)
      if (std::find(chains_[c].begin(), chains_[c].end(), deepest) != chains_[c].end()) {
        winner = c;
        break;
      }
    for (size_t c = 0; c < chains_.size(); ++c) {
      double r = 0;
      if (c == winner) {
        int32_t on_path = 0;
        for (int32_t node : chains_[c]) on_path += std::find(path.begin(), path.end(), node) != path.end();
        r = static_cast<double>(on_path) / chains_[c].size();
        winner_r_ = r;
      }
      scores_.update(selected_[c], r);
    }
  }
  const std::vector<int32_t>& now = feedback.committed_now;
  const std::vector<float>& entropies = feedback.target.entropies;
  for (size_t i = 0; i < now.size(); ++i)
    append(now[i], i < entropies.size() ? entropies[i] : std::numeric_limits<double>::quiet_NaN());
  if (fallback_) fallback_->observe(feedback);
}

DraftingDetail RespecDrafter::step_detail() const {
  return {{"trigger", trigger_},
          {"h_min", std::isfinite(key_.h_min) ? DetailValue(key_.h_min) : DetailValue()},
          {"key", key_.k},
          {"matches", matches_},
          {"candidates", selected_.size()},
          {"ema_size", scores_.size()},
          {"winner_r", winner_r_ >= 0 ? DetailValue(winner_r_) : DetailValue()}};
}

}  // namespace specd
