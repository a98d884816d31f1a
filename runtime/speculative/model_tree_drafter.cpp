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

DraftTree ModelTreeDrafter::propose(const DraftRequest& request) {
  DraftTree tree(request.root_token);
  const int32_t depth = std::min(options_.depth, request.max_depth);
  const int32_t max_nodes = std::min(options_.nodes, request.max_nodes);
  catch_up_ = 0;
  if (depth <= 0 || max_nodes <= 0) return tree;
  std::vector<int32_t> tokens = request.committed;
  tokens.push_back(request.root_token);
  const std::vector<float> root_logits = runner_.sync(tokens);
  catch_up_ = runner_.last_sync_rows() - 1;
  const int64_t vocab = static_cast<int64_t>(root_logits.size());
  const int64_t tree_base = runner_.length();
  const int64_t root_position = tree_base - 1;

  std::vector<PoolNode> pool;
  std::vector<int32_t> frontier;
  for (auto [token, logp] : draft_top_log_probs(root_logits.data(), vocab, options_.top_k, scratch_)) {
    frontier.push_back(static_cast<int32_t>(pool.size()));
    pool.push_back({token, -1, logp});
  }
  std::vector<int64_t> cached_parents;  // parent row of every fed pool node, in row order
  for (int32_t level = 2; level <= depth; ++level) {
    if (root_position + level >= runner_.model().context_length()) break;
    // Feed the frontier: each node sees the prefix and its own ancestors.
    ForwardRequest feed;
    feed.tree_base = tree_base;
    feed.cached_parents = cached_parents;
    for (int32_t node : frontier) {
      feed.tokens.push_back(pool[node].token);
      feed.parents.push_back(pool[node].parent < 0 ? -1 : pool[pool[node].parent].row);
      feed.positions.push_back(root_position + level - 1);
    }
    const int64_t first_row = runner_.cache().length();
    const FloatRows logits = runner_.forward(feed).logits;
    std::vector<int32_t> children;
    for (size_t f = 0; f < frontier.size(); ++f) {
      // The parent's score is copied, not referenced: the push_backs below may reallocate the pool.
      const double score = pool[frontier[f]].score;
      pool[frontier[f]].row = first_row + static_cast<int64_t>(f);
      cached_parents.push_back(feed.parents[f]);
      const float* row = logits.row(static_cast<int64_t>(f));
      for (auto [token, logp] : draft_top_log_probs(row, vocab, options_.top_k, scratch_)) {
        children.push_back(static_cast<int32_t>(pool.size()));
        pool.push_back({token, frontier[f], score + logp});
      }
    }
    std::stable_sort(children.begin(), children.end(), [&](int32_t a, int32_t b) { return pool[a].score > pool[b].score; });
    children.resize(std::min<size_t>(children.size(), static_cast<size_t>(options_.top_k)));
    std::sort(children.begin(), children.end());
    frontier = children;
  }
  // Tree rows are scratch: the next sync re-feeds whatever gets committed.
  runner_.truncate(tree_base);

  // The best max_nodes nodes of the pool; a child never outscores its parent (log-probs <= 0),
  // so taking the best in score order, skipping nodes whose parent was not taken, stays closed.
  std::vector<int32_t> order(pool.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return pool[a].score > pool[b].score; });
  std::vector<bool> taken(pool.size(), false);
  int32_t count = 0;
  for (int32_t node : order) {
    if (count >= max_nodes) break;
    if (pool[node].parent >= 0 && !taken[pool[node].parent]) continue;
    taken[node] = true;
    ++count;
  }
  // Pool order is level-major, so parents come before children.
  std::vector<int32_t> tree_index(pool.size(), -1);
  for (size_t node = 0; node < pool.size(); ++node) {
    if (!taken[node]) continue;
    int32_t parent = pool[node].parent < 0 ? 0 : tree_index[pool[node].parent];
    tree_index[node] = tree.add(parent, pool[node].token, DraftSource::Model, 1.0f, static_cast<float>(pool[node].score));
  }
  return tree;
}

}  // namespace specd
