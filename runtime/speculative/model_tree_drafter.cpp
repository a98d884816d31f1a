#include "speculative/model_tree_drafter.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
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
  double value;    // estimated chance that verification accepts the path to this node
  int8_t bucket, rank;  // the parent's TreeAcceptance bucket, the rank among its siblings
  float q = 1.0f;       // the draft's probability of a sampled child's token (1: a top-k child)
  int64_t row = -1;  // draft cache row once the node has been fed (expanded)
  std::shared_ptr<const std::vector<float>> child_q{};  // the distribution its children were drawn from
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

ModelTreeDrafter::ModelTreeDrafter(std::shared_ptr<const LlamaModel> draft, const TreeDraftOptions& options,
                                   const SamplingParams& sampling)
    : runner_(std::move(draft)), options_(options), sampling_(sampling), sampler_(drafter_stream(sampling, sampling.seed)) {}

// The tree, one draft-model forward per level: the first brings the draft's cache up to the text
// and the root, each later one feeds the frontier (each node seeing the prefix and its ancestors).
class ModelTreeDrafter::Rounds final : public DraftRounds {
 public:
  Rounds(ModelTreeDrafter& drafter, const DraftRequest& request) : d_(drafter), tree_(request.root_token) {
    depth_ = std::min(d_.options_.depth, request.max_depth);
    max_nodes_ = std::min(d_.options_.nodes, request.max_nodes);
    d_.catch_up_ = 0;
    d_.last_.reset();
    if (depth_ <= 0 || max_nodes_ <= 0) return;
    // The last tree's rows that the text has since committed stay; the sync feeds the rest.
    const std::vector<int64_t> kept = d_.fed_path(request.committed);
    const size_t synced = static_cast<size_t>(d_.runner_.length());
    d_.runner_.keep_path(kept, std::vector<int32_t>(request.committed.begin() + synced, request.committed.begin() + synced + kept.size()));
    d_.fed_.clear();
    std::vector<int32_t> tokens = request.committed;
    tokens.push_back(request.root_token);
    pending_ = d_.runner_.sync_request(tokens);
    has_pending_ = true;
  }

  DraftShape shape() const override { return depth_ > 0 && max_nodes_ > 0 ? DraftShape{max_nodes_, std::min(depth_, max_nodes_)} : DraftShape{}; }
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
      std::vector<int32_t> children;
      if (sampled_)
        sample_children({-1}, {root_logits.data()}, children);
      else
        add_children(-1, draft_top_log_probs(root_logits.data(), vocab_, d_.options_.top_k, d_.scratch_), children);
      frontier_ = expandable(children);
    } else {
      std::vector<int32_t> children;
      std::vector<const float*> rows;
      for (size_t f = 0; f < frontier_.size(); ++f) {
        pool_[frontier_[f]].row = first_row_ + static_cast<int64_t>(f);
        cached_parents_.push_back(pending_.parents[f]);
        rows.push_back(result.logits.row(static_cast<int64_t>(f)));
        if (!sampled_) add_children(frontier_[f], draft_top_log_probs(rows.back(), vocab_, d_.options_.top_k, d_.scratch_), children);
      }
      if (sampled_) sample_children(frontier_, rows, children);
      frontier_ = expandable(children);
    }
    ++level_;
    if (level_ <= depth_ && !frontier_.empty() && tree_base_ - 1 + level_ < d_.runner_.model().context_length())
      feed_frontier();
    else finish();
  }

  DraftTree tree() override { return std::move(tree_); }

 private:
  // A fed node's (or, parent -1, the root's) children, best first, into the pool and `added`.
  void add_children(int32_t parent, const std::vector<std::pair<int32_t, double>>& top, std::vector<int32_t>& added) {
    if (top.empty()) return;
    const TreeAcceptance& a = d_.acceptance_;
    const int bucket = TreeAcceptance::bucket(std::exp(top.front().second));
    // Copied, not referenced: the push_backs below may reallocate the pool.
    const double base_score = parent < 0 ? 0.0 : pool_[parent].score;
    const double base_value = parent < 0 ? 1.0 : pool_[parent].value;
    for (size_t r = 0; r < top.size(); ++r) {
      added.push_back(static_cast<int32_t>(pool_.size()));
      pool_.push_back({top[r].first, parent, base_score + top[r].second,
                       base_value * a.child_share(bucket, static_cast<int>(r)), static_cast<int8_t>(bucket),
                       static_cast<int8_t>(std::min<size_t>(r, 127))});
    }
  }

  // T > 0: the children of the fed nodes `parents` (-1: the root), whose logits rows are `rows`.
  // How many each gets is chosen first: top_k candidate ranks per parent, valued as top-k
  // children are, each with a virtual chain below as in expandable(), compete for the slots the
  // tree has left; then each parent draws that many children i.i.d. from its shaped distribution.
  void sample_children(const std::vector<int32_t>& parents, const std::vector<const float*>& rows, std::vector<int32_t>& added) {
    const TreeAcceptance& a = d_.acceptance_;
    std::vector<double> value;
    std::vector<int32_t> parent;
    selection_values(value, parent);
    std::vector<std::shared_ptr<const std::vector<float>>> qs;
    std::vector<int> buckets;
    std::vector<std::vector<int32_t>> candidates(parents.size());
    for (size_t i = 0; i < parents.size(); ++i) {
      std::vector<double> shaped = shaped_distribution(rows[i], vocab_, d_.sampling_);
      buckets.push_back(TreeAcceptance::bucket(*std::max_element(shaped.begin(), shaped.end())));
      qs.push_back(std::make_shared<const std::vector<float>>(shaped.begin(), shaped.end()));
      const double base = parents[i] < 0 ? 1.0 : pool_[parents[i]].value;
      for (int r = 0; r < d_.options_.top_k; ++r) {
        candidates[i].push_back(static_cast<int32_t>(value.size()));
        add_virtual_chain(value, parent, parents[i], base * a.child_share(buckets[i], r), level_);
      }
    }
    std::vector<bool> taken(value.size(), false);
    for (int32_t node : best_of(value, parent, max_nodes_)) taken[node] = true;
    for (size_t i = 0; i < parents.size(); ++i) {
      const int32_t count = static_cast<int32_t>(std::count_if(candidates[i].begin(), candidates[i].end(), [&](int32_t c) { return taken[c]; }));
      if (count == 0) continue;
      const std::vector<double> q(qs[i]->begin(), qs[i]->end());
      const double base_score = parents[i] < 0 ? 0.0 : pool_[parents[i]].score;
      const double base_value = parents[i] < 0 ? 1.0 : pool_[parents[i]].value;
      if (parents[i] < 0) root_q_ = qs[i];
      else pool_[parents[i]].child_q = qs[i];
      for (int32_t r = 0; r < count; ++r) {
        const int32_t token = draw(q, d_.sampler_.uniform());
        added.push_back(static_cast<int32_t>(pool_.size()));
        PoolNode node{token, parents[i], base_score + std::log(q[token]), base_value * a.child_share(buckets[i], r),
                      static_cast<int8_t>(buckets[i]), static_cast<int8_t>(std::min(r, 127))};
        node.q = static_cast<float>(q[token]);
        pool_.push_back(std::move(node));
      }
    }
  }

  // A node of value v at depth `depth` under `above` (a pool index, -1: the root) into the
  // selection arrays, with a virtual chain below it down to the tree's depth, each link valued as
  // the draft's surest child (the best first-rank rate).
  void add_virtual_chain(std::vector<double>& value, std::vector<int32_t>& parent, int32_t above, double v, int32_t depth) const {
    const double rate = d_.acceptance_.best_first_rate();
    for (int32_t d = depth; d <= depth_; ++d) {
      value.push_back(v);
      parent.push_back(above);
      above = static_cast<int32_t>(value.size()) - 1;
      v *= rate;
    }
  }

  // The pool as the selection sees it: at T = 0 every node by its value; at T > 0 every node is
  // drawn already and stays (infinite value).
  void selection_values(std::vector<double>& value, std::vector<int32_t>& parent) const {
    for (const PoolNode& node : pool_) {
      value.push_back(sampled_ ? std::numeric_limits<double>::infinity() : node.value);
      parent.push_back(node.parent);
    }
  }

  // The best n nodes by value, best first, of nodes given by value and parent (-1: the root's
  // child). A child's value never exceeds its parent's (a share is at most 1) and a parent comes
  // before its children, so the stable order takes parents first and the set is ancestor-closed.
  static std::vector<int32_t> best_of(const std::vector<double>& value, const std::vector<int32_t>& parent, int32_t n) {
    std::vector<int32_t> order(value.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return value[a] > value[b]; });
    std::vector<bool> taken(value.size(), false);
    std::vector<int32_t> best;
    for (int32_t node : order) {
      if (static_cast<int32_t>(best.size()) >= n) break;
      if (parent[node] >= 0 && !taken[parent[node]]) continue;
      taken[node] = true;
      best.push_back(node);
    }
    return best;
  }

  std::vector<int32_t> best_nodes() const {
    std::vector<double> value;
    std::vector<int32_t> parent;
    selection_values(value, parent);
    return best_of(value, parent, max_nodes_);
  }

  // Of the new nodes at depth level_, those worth feeding (at most top_k, in pool order): each
  // gets a virtual chain of descendants down to the tree's depth, valued as if every one were the
  // draft's surest child (the best first-rank rate), and a node is fed when its virtual child
  // makes the best max_nodes of pool and virtual nodes. So a node is fed only if its children
  // could displace what the other branches will likely grow.
  std::vector<int32_t> expandable(const std::vector<int32_t>& level) const {
    const double rate = d_.acceptance_.best_first_rate();
    std::vector<double> value;
    std::vector<int32_t> parent;
    selection_values(value, parent);
    std::vector<std::pair<int32_t, int32_t>> first_virtual;  // (level node, its virtual child)
    for (int32_t node : level) {
      if (level_ + 1 > depth_) break;
      first_virtual.emplace_back(node, static_cast<int32_t>(value.size()));
      add_virtual_chain(value, parent, node, pool_[node].value * rate, level_ + 1);
    }
    std::vector<bool> taken(value.size(), false);
    for (int32_t node : best_of(value, parent, max_nodes_)) taken[node] = true;
    std::vector<std::pair<double, int32_t>> worth;
    for (auto [node, child] : first_virtual)
      if (taken[child]) worth.emplace_back(-pool_[node].value, node);
    std::stable_sort(worth.begin(), worth.end());
    std::vector<int32_t> chosen;
    for (auto [negative_value, node] : worth)
      if (static_cast<int32_t>(chosen.size()) < d_.options_.top_k) chosen.push_back(node);
    std::sort(chosen.begin(), chosen.end());
    return chosen;
  }

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

  // The tree: the pool's best max_nodes nodes, in pool order (level-major, so parents first).
  void finish() {
    // The fed nodes' rows stay in the draft's cache until the next sync, which keeps those the
    // text commits (fed_path).
    std::vector<int32_t> fed_index(pool_.size(), -1);
    for (size_t node = 0; node < pool_.size(); ++node) {
      if (pool_[node].row < 0) continue;
      fed_index[node] = static_cast<int32_t>(d_.fed_.size());
      d_.fed_.push_back({pool_[node].token, pool_[node].parent < 0 ? -1 : fed_index[pool_[node].parent], pool_[node].row});
    }
    std::vector<bool> taken(pool_.size(), false);
    for (int32_t node : best_nodes()) taken[node] = true;
    Proposal proposal;
    proposal.bucket.push_back(0);
    proposal.rank.push_back(0);
    std::vector<int32_t> tree_index(pool_.size(), -1);
    for (size_t node = 0; node < pool_.size(); ++node) {
      if (!taken[node]) continue;
      const int32_t parent = pool_[node].parent < 0 ? 0 : tree_index[pool_[node].parent];
      tree_index[node] = tree_.add(parent, pool_[node].token, DraftSource::Model, pool_[node].q, static_cast<float>(pool_[node].score));
      proposal.bucket.push_back(pool_[node].bucket);
      proposal.rank.push_back(pool_[node].rank);
    }
    // Sampled children's distributions, for the acceptor's residual.
    if (tree_.size() > 1) tree_.child_q[0] = root_q_;
    for (size_t node = 0; node < pool_.size(); ++node)
      if (taken[node] && pool_[node].child_q) tree_.child_q[tree_index[node]] = pool_[node].child_q;
    proposal.tree = tree_;
    d_.last_ = std::move(proposal);
  }

  ModelTreeDrafter& d_;
  DraftTree tree_;
  int32_t depth_ = 0, max_nodes_ = 0, level_ = 1;
  int64_t vocab_ = 0, tree_base_ = 0, first_row_ = 0;
  bool sampled_ = d_.sampling_.temperature > 0;  // children drawn from the draft (T > 0), not its top-k
  std::shared_ptr<const std::vector<float>> root_q_;  // what the root's children were drawn from (T > 0)
  std::vector<PoolNode> pool_;
  std::vector<int32_t> frontier_;
  std::vector<int64_t> cached_parents_;  // parent row of every fed pool node, in row order
  ForwardRequest pending_;
  bool has_pending_ = false;
};

std::unique_ptr<DraftRounds> ModelTreeDrafter::propose_in_rounds(const DraftRequest& request) {
  return std::make_unique<Rounds>(*this, request);
}

// The step verified what this drafter proposed last, or a pruned copy of it (keep_only keeps the
// order and the parents), or another drafter's tree (a retrieval drafter's own proposal): then
// its nodes are not a subsequence of the proposal's and nothing is learned.
void ModelTreeDrafter::observe(const StepFeedback& feedback) {
  if (!last_) return;
  const Proposal proposal = std::move(*last_);
  last_.reset();
  const DraftTree& tree = feedback.tree;
  const DraftTree& mine = proposal.tree;
  if (tree.size() < 1 || tree.tokens[0] != mine.tokens[0]) return;
  std::vector<int32_t> origin(static_cast<size_t>(tree.size()), 0);  // node of `mine` for each node of `tree`
  int32_t j = 1;
  for (int32_t i = 1; i < tree.size(); ++i) {
    const int32_t parent = origin[tree.parents[i]];
    while (j < mine.size() && !(mine.tokens[j] == tree.tokens[i] && mine.parents[j] == parent)) ++j;
    if (j == mine.size()) return;
    origin[i] = j++;
  }
  acceptance_.decay();
  std::vector<std::vector<int32_t>> children(static_cast<size_t>(tree.size()));
  for (int32_t i = 1; i < tree.size(); ++i) children[tree.parents[i]].push_back(i);
  // Each reached node's children in rank order, until one is accepted (the later ones were not
  // tried in the sense the rates are defined) or one was not reached.
  for (int32_t node : feedback.result.path) {
    std::vector<int32_t>& kids = children[node];
    if (kids.empty()) continue;
    if (mine.child_q[origin[node]]) {
      // Sampled children are tried in a random order, and are exchangeable: what counts is how
      // many were tried before one was accepted.
      int32_t tried = 0;
      bool accepted = false;
      for (int32_t kid : kids) {
        if (feedback.result.verdicts[kid] == NodeVerdict::NotReached) continue;
        ++tried;
        accepted = accepted || feedback.result.verdicts[kid] != NodeVerdict::Rejected;
      }
      for (int32_t r = 0; r < tried; ++r) acceptance_.observe(proposal.bucket[origin[kids[0]]], r, accepted && r == tried - 1);
      continue;
    }
    std::stable_sort(kids.begin(), kids.end(),
                     [&](int32_t a, int32_t b) { return proposal.rank[origin[a]] < proposal.rank[origin[b]]; });
    for (int32_t kid : kids) {
      const NodeVerdict verdict = feedback.result.verdicts[kid];
      if (verdict == NodeVerdict::NotReached) break;
      const bool accepted = verdict != NodeVerdict::Rejected;
      acceptance_.observe(proposal.bucket[origin[kid]], proposal.rank[origin[kid]], accepted);
      if (accepted) break;
    }
  }
}

std::vector<int64_t> ModelTreeDrafter::fed_path(const std::vector<int32_t>& committed) const {
  std::vector<int64_t> rows;
  const int64_t synced = runner_.length();
  // The synced text must be a prefix of `committed` (rows_to_sync counts the rest and a root).
  if (fed_.empty() || runner_.rows_to_sync(committed) != static_cast<int64_t>(committed.size()) - synced + 1) return rows;
  int32_t parent = -1;
  for (size_t i = static_cast<size_t>(synced); i < committed.size(); ++i) {
    int32_t next = -1;
    for (size_t f = 0; f < fed_.size() && next < 0; ++f)
      if (fed_[f].parent == parent && fed_[f].token == committed[i]) next = static_cast<int32_t>(f);
    if (next < 0) break;
    rows.push_back(fed_[static_cast<size_t>(next)].row);
    parent = next;
  }
  return rows;
}

DraftTree ModelTreeDrafter::propose(const DraftRequest& request) {
  Rounds rounds(*this, request);
  return run_alone(rounds);
}

}  // namespace specd
