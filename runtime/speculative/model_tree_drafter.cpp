#include "speculative/model_tree_drafter.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "model/llama_model.h"
#include "util/vector_math.h"

namespace specd {
namespace {

struct PoolNode {
  int32_t token;
  int32_t parent;  // index into the pool, -1 for a child of the root
  double score;    // cumulative log-probability
  int64_t row = -1;  // draft cache row once the node has been fed (expanded)
};

}  // namespace

// Runs 1 + (depth - 1) * top_k times a step over the whole vocabulary, so it must cost far less
// than a draft forward. Sorting every id with a comparator (~20 us a row) and a scalar double exp
// per token (~40 us) cost more than the forward that made the row. Instead: the k best kept in a
// sorted list of k, scanning only blocks whose (vectorised) maximum beats the k-th best, and the
// normaliser from vectorised float exponentials.
std::vector<std::pair<int32_t, double>> draft_top_log_probs(const float* logits, int64_t vocab, int32_t k,
                                                            std::vector<float>& scratch) {
  constexpr int64_t kBlock = 64;
  std::vector<std::pair<int32_t, double>> top;
  k = static_cast<int32_t>(std::min<int64_t>(k, vocab));
  if (k <= 0) return top;
  std::vector<int32_t> best;
  best.reserve(static_cast<size_t>(k) + 1);
  auto consider = [&](int64_t i) {
    const float v = logits[i];
    if (static_cast<int32_t>(best.size()) == k && !(v > logits[best.back()])) return;
    // After the equal ones: ties go to the lower id, which came first.
    auto at = std::upper_bound(best.begin(), best.end(), v, [&](float x, int32_t id) { return x > logits[id]; });
    best.insert(at, static_cast<int32_t>(i));
    if (static_cast<int32_t>(best.size()) > k) best.pop_back();
  };
  int64_t i = 0;
  for (; i < k; ++i) consider(i);
  for (; i < vocab; i += kBlock) {
    const int64_t end = std::min(vocab, i + kBlock);
    // A block none of whose logits beats the k-th best changes nothing. (NaN logits have no
    // ranking: whatever this keeps then, it stays deterministic.)
    if (cpu::max_value(logits + i, end - i) <= logits[best.back()]) continue;
    for (int64_t j = i; j < end; ++j) consider(j);
  }
  const float max_logit = cpu::max_value(logits, vocab);
  scratch.assign(logits, logits + vocab);
  const double log_z = std::log(static_cast<double>(cpu::exp_shifted_sum(scratch.data(), vocab, max_logit))) + max_logit;
  for (int32_t id : best) top.emplace_back(id, logits[id] - log_z);
  return top;
}

ModelTreeDrafter::ModelTreeDrafter(std::shared_ptr<const LlamaModel> draft, const TreeDraftOptions& options)
    : runner_(std::move(draft)), options_(options) {}

// The tree, one draft-model forward per level: the first brings the draft's cache up to the text
// and the root, each later one feeds the frontier (each node seeing the prefix and its ancestors).
class ModelTreeDrafter::Rounds final : public DraftRounds {
 public:
  Rounds(ModelTreeDrafter& drafter, const DraftRequest& request) : d_(drafter), tree_(request.root_token) {
    depth_ = std::min(d_.options_.depth, request.max_depth);
    max_nodes_ = std::min(d_.options_.nodes, request.max_nodes);
    d_.catch_up_ = 0;
    if (depth_ <= 0 || max_nodes_ <= 0) return;
    std::vector<int32_t> tokens = request.committed;
    tokens.push_back(request.root_token);
    pending_ = d_.runner_.sync_request(tokens);
    has_pending_ = true;
  }

  const ForwardRequest* next() override { return has_pending_ ? &pending_ : nullptr; }
  const LlamaModel& model() const override { return d_.runner_.model(); }
  KvCache& cache() override { return d_.runner_.forward_cache(); }

  void feed(ForwardResult result) override {
    has_pending_ = false;
    if (level_ == 1) {  // the sync: the root's children start the frontier
      const std::vector<float> root_logits = d_.runner_.sync_done(std::move(result));
      d_.catch_up_ = d_.runner_.last_sync_rows() - 1;
      vocab_ = static_cast<int64_t>(root_logits.size());
      tree_base_ = d_.runner_.length();
      for (auto [token, logp] : draft_top_log_probs(root_logits.data(), vocab_, d_.options_.top_k, d_.scratch_)) {
        frontier_.push_back(static_cast<int32_t>(pool_.size()));
        pool_.push_back({token, -1, logp});
      }
    } else {
      std::vector<int32_t> children;
      for (size_t f = 0; f < frontier_.size(); ++f) {
        // The parent's score is copied, not referenced: the push_backs below may reallocate the pool.
        const double score = pool_[frontier_[f]].score;
        pool_[frontier_[f]].row = first_row_ + static_cast<int64_t>(f);
        cached_parents_.push_back(pending_.parents[f]);
        const float* row = result.logits.row(static_cast<int64_t>(f));
        for (auto [token, logp] : draft_top_log_probs(row, vocab_, d_.options_.top_k, d_.scratch_)) {
          children.push_back(static_cast<int32_t>(pool_.size()));
          pool_.push_back({token, frontier_[f], score + logp});
        }
      }
      std::stable_sort(children.begin(), children.end(), [&](int32_t a, int32_t b) { return pool_[a].score > pool_[b].score; });
      children.resize(std::min<size_t>(children.size(), static_cast<size_t>(d_.options_.top_k)));
      std::sort(children.begin(), children.end());
      frontier_ = children;
    }
    ++level_;
    if (level_ <= depth_ && tree_base_ - 1 + level_ < d_.runner_.model().context_length()) feed_frontier();
    else finish();
  }

  DraftTree tree() override { return std::move(tree_); }

 private:
  // The next level's forward: the frontier at its depth's position.
  void feed_frontier() {
    ForwardRequest level;
    level.tree_base = tree_base_;
    level.cached_parents = cached_parents_;
    for (int32_t node : frontier_) {
      level.tokens.push_back(pool_[node].token);
      level.parents.push_back(pool_[node].parent < 0 ? -1 : pool_[pool_[node].parent].row);
      level.positions.push_back(tree_base_ - 1 + level_ - 1);
    }
    d_.runner_.make_room(level);
    first_row_ = d_.runner_.cache().length();
    pending_ = std::move(level);
    has_pending_ = true;
  }

  // The best max_nodes nodes of the pool; a child never outscores its parent (log-probs <= 0),
  // so taking the best in score order, skipping nodes whose parent was not taken, stays closed.
  void finish() {
    d_.runner_.truncate(tree_base_);  // tree rows are scratch: the next sync re-feeds what gets committed
    std::vector<int32_t> order(pool_.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return pool_[a].score > pool_[b].score; });
    std::vector<bool> taken(pool_.size(), false);
    int32_t count = 0;
    for (int32_t node : order) {
      if (count >= max_nodes_) break;
      if (pool_[node].parent >= 0 && !taken[pool_[node].parent]) continue;
      taken[node] = true;
      ++count;
    }
    // Pool order is level-major, so parents come before children.
    std::vector<int32_t> tree_index(pool_.size(), -1);
    for (size_t node = 0; node < pool_.size(); ++node) {
      if (!taken[node]) continue;
      const int32_t parent = pool_[node].parent < 0 ? 0 : tree_index[pool_[node].parent];
      tree_index[node] = tree_.add(parent, pool_[node].token, DraftSource::Model, 1.0f, static_cast<float>(pool_[node].score));
    }
  }

  ModelTreeDrafter& d_;
  DraftTree tree_;
  int32_t depth_ = 0, max_nodes_ = 0, level_ = 1;
  int64_t vocab_ = 0, tree_base_ = 0, first_row_ = 0;
  std::vector<PoolNode> pool_;
  std::vector<int32_t> frontier_;
  std::vector<int64_t> cached_parents_;  // parent row of every fed pool node, in row order
  ForwardRequest pending_;
  bool has_pending_ = false;
};

std::unique_ptr<DraftRounds> ModelTreeDrafter::propose_in_rounds(const DraftRequest& request) {
  return std::make_unique<Rounds>(*this, request);
}

DraftTree ModelTreeDrafter::propose(const DraftRequest& request) {
  Rounds rounds(*this, request);
  return run_alone(rounds);
}

}  // namespace specd
