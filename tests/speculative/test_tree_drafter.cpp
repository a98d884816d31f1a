// The draft-model tree drafter (sd-tree) against a reference: its selection (EAGLE-2's levels,
// nodes valued by TreeAcceptance) recomputed here from chain forwards of each node's path on a
// fresh cache. A token's logits are bit-identical in a chain and in a tree
// (test_forward_oracles.cpp), so the trees must be equal node for node.
#include "catch_torch.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "methods/method_registry.h"
#include "speculative/model_tree_drafter.h"
#include "speculative/tree_acceptance.h"
#include "fixture_models.h"
#include "util/vector_math.h"

using namespace specd;

namespace {

// The k largest log-probabilities of one row, ties to the lower id (the drafter's arithmetic).
std::vector<std::pair<int32_t, double>> top_log_probs(const at::Tensor& row, int32_t k) {
  const float* logits = row.data_ptr<float>();
  const int64_t vocab = row.size(0);
  // The normaliser as the drafter sums it (vectorised float exponentials): the trees must match
  // node for node, so near-equal path scores must compare alike. test_draft_tree_cost.cpp holds
  // those values to a double-precision log-softmax.
  const float max_logit = cpu::max_value(logits, vocab);
  std::vector<float> shifted(logits, logits + vocab);
  const double log_z = std::log(static_cast<double>(cpu::exp_shifted_sum(shifted.data(), vocab, max_logit))) + max_logit;
  std::vector<int32_t> ids(static_cast<size_t>(vocab));
  std::iota(ids.begin(), ids.end(), 0);
  std::stable_sort(ids.begin(), ids.end(), [&](int32_t a, int32_t b) { return logits[a] > logits[b]; });
  std::vector<std::pair<int32_t, double>> top;
  for (int32_t i = 0; i < k; ++i) top.emplace_back(ids[i], logits[ids[i]] - log_z);
  return top;
}

struct Node {
  int32_t token, parent;  // parent: index into the pool, -1 under the root
  double value;           // chance the path is accepted, by the rates of `acceptance`
};

// Logits after `context` and then the path to `node`, from chain forwards on a fresh cache.
at::Tensor path_logits(const LlamaModel& model, const std::vector<int32_t>& context, const std::vector<Node>& pool,
                       int32_t node) {
  std::vector<int64_t> path;
  for (int32_t n = node; n >= 0; n = pool[n].parent) path.insert(path.begin(), pool[n].token);
  KvCache cache = model.new_cache();
  ForwardRequest prefix;
  prefix.tokens.assign(context.begin(), context.end());
  prefix.logits = LogitsWanted::None;
  model.forward(cache, prefix);
  ForwardRequest chain;
  chain.tokens = path;
  chain.logits = LogitsWanted::Last;
  return test::tensor(model.forward(cache, chain).logits)[0].contiguous();
}

// The best n of `pool` by value, ties to the earlier node, a node only after its parent.
std::vector<bool> best_set(const std::vector<Node>& pool, int32_t n) {
  std::vector<int32_t> order(pool.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return pool[a].value > pool[b].value; });
  std::vector<bool> taken(pool.size(), false);
  int32_t count = 0;
  for (int32_t node : order) {
    if (count == n) break;
    if (pool[node].parent >= 0 && !taken[pool[node].parent]) continue;
    taken[node] = true;
    ++count;
  }
  return taken;
}

// The nodes of `level` (at depth `depth`) to feed: those whose first virtual descendant (each
// valued at the best first-rank rate, down to options.depth) makes the best options.nodes of
// pool and virtual nodes; the top_k most valuable of them, in pool order.
std::vector<int32_t> to_feed(const std::vector<Node>& pool, const std::vector<int32_t>& level, int32_t depth,
                             const TreeDraftOptions& options, const TreeAcceptance& acceptance) {
  double rate = 0;
  for (int b = 0; b < TreeAcceptance::kBuckets; ++b) rate = std::max(rate, acceptance.rate(b, 0));
  std::vector<Node> extended = pool;
  std::vector<std::pair<int32_t, int32_t>> first;
  for (int32_t node : level) {
    int32_t above = node;
    for (int32_t d = depth + 1; d <= options.depth; ++d) {
      extended.push_back({-1, above, extended[above].value * rate});
      above = static_cast<int32_t>(extended.size()) - 1;
      if (d == depth + 1) first.emplace_back(node, above);
    }
  }
  const std::vector<bool> taken = best_set(extended, options.nodes);
  std::vector<int32_t> chosen;
  for (auto [node, child] : first)
    if (taken[child]) chosen.push_back(node);
  std::stable_sort(chosen.begin(), chosen.end(), [&](int32_t a, int32_t b) { return pool[a].value > pool[b].value; });
  if (static_cast<int32_t>(chosen.size()) > options.top_k) chosen.resize(static_cast<size_t>(options.top_k));
  std::sort(chosen.begin(), chosen.end());
  return chosen;
}

// The top_k children of `parent` (-1: the root) from its logits row, valued by the rates.
std::vector<int32_t> add_children(std::vector<Node>& pool, int32_t parent, const at::Tensor& row, int32_t top_k,
                                  const TreeAcceptance& acceptance) {
  const auto top = top_log_probs(row, top_k);
  const int bucket = TreeAcceptance::bucket(std::exp(top.front().second));
  const double base = parent < 0 ? 1.0 : pool[parent].value;
  std::vector<int32_t> added;
  for (size_t r = 0; r < top.size(); ++r) {
    added.push_back(static_cast<int32_t>(pool.size()));
    pool.push_back({top[r].first, parent, base * acceptance.child_share(bucket, static_cast<int>(r))});
  }
  return added;
}

DraftTree reference_tree(const LlamaModel& model, const std::vector<int32_t>& committed, int32_t root,
                         const TreeDraftOptions& options, const TreeAcceptance& acceptance) {
  std::vector<int32_t> context = committed;
  context.push_back(root);
  std::vector<Node> pool;
  ForwardRequest request;
  request.tokens.assign(context.begin(), context.end());
  request.logits = LogitsWanted::Last;
  KvCache cache = model.new_cache();
  const at::Tensor root_row = test::tensor(model.forward(cache, request).logits)[0].contiguous();
  std::vector<int32_t> frontier = to_feed(pool, add_children(pool, -1, root_row, options.top_k, acceptance), 1, options, acceptance);
  for (int32_t depth = 2; depth <= options.depth && !frontier.empty(); ++depth) {
    std::vector<int32_t> level;
    for (int32_t node : frontier)
      for (int32_t child : add_children(pool, node, path_logits(model, context, pool, node), options.top_k, acceptance))
        level.push_back(child);
    frontier = to_feed(pool, level, depth, options, acceptance);
  }
  const std::vector<bool> taken = best_set(pool, options.nodes);
  std::vector<int32_t> index(pool.size(), -1);
  DraftTree tree(root);
  for (size_t node = 0; node < pool.size(); ++node)
    if (taken[node])
      index[node] = tree.add(pool[node].parent < 0 ? 0 : index[pool[node].parent], pool[node].token, DraftSource::Model);
  return tree;
}

}  // namespace

TEST_CASE("sd-tree drafts the tree its rule chooses from its model's path logits", "[spec][tree-drafter]") {
  auto cfg = test::tiny_config("llama");
  auto dtype = GENERATE(DType::F32, DType::BF16);
  CAPTURE(dtype_name(dtype));
  std::shared_ptr<const LlamaModel> model = test::load_model(test::write_model("tree-drafter", cfg, dtype, 21), false, 2);
  MethodOptions options;
  options.tree = {3, 4, 10};
  options.adaptive_budget = false;
  const SamplingParams greedy;
  Policy policy = make_policy("sd-tree", MethodContext{*model, model, greedy, options, nullptr});

  // Several steps of one request: the drafter re-syncs its cache to a longer committed text.
  std::vector<int32_t> committed{3, 1, 4, 1, 5, 9, 2, 6};
  policy.drafter->begin(committed, 0);
  for (int32_t root : {5, 35, 89, 79, 32}) {
    CAPTURE(root);
    const DraftTree tree = policy.drafter->propose({committed, root, options.tree.nodes, options.tree.depth});
    // No step verified: the rates are the prior's.
    const DraftTree expected = reference_tree(*model, committed, root, options.tree, TreeAcceptance{});
    CHECK(tree.tokens == expected.tokens);
    CHECK(tree.parents == expected.parents);
    committed.push_back(root);
    committed.push_back(tree.tokens.back());
  }
}

TEST_CASE("the tree drafter keeps the draft-cache rows of the path the text commits, and drafts as from a fresh cache",
          "[spec][tree-drafter]") {
  auto cfg = test::tiny_config("llama");
  std::shared_ptr<const LlamaModel> model = test::load_model(test::write_model("tree-drafter-kept", cfg, DType::F32, 23), false, 2);
  MethodOptions options;
  options.tree = {3, 4, 10};
  options.adaptive_budget = false;
  Policy policy = make_policy("sd-tree", MethodContext{*model, model, SamplingParams{}, options, nullptr});
  std::vector<int32_t> committed{3, 1, 4, 1, 5, 9, 2, 6};
  policy.drafter->begin(committed, 0);
  int64_t kept_rows = 0;
  for (int32_t root : {5, 35, 89, 79, 32}) {
    CAPTURE(root);
    // What the next sync feeds: the text the cache lacks and the root, less the kept rows.
    const int64_t planned = policy.drafter->first_round_rows(committed);
    const DraftTree tree = policy.drafter->propose({committed, root, options.tree.nodes, options.tree.depth});
    CHECK(policy.drafter->last_catch_up() + 1 == planned);
    const DraftTree expected = reference_tree(*model, committed, root, options.tree, TreeAcceptance{});
    CHECK(tree.tokens == expected.tokens);
    CHECK(tree.parents == expected.parents);
    // The text commits the root and the path down to the tree's deepest node (the last, in
    // level order): every node on it but the leaf was fed, so only the leaf and the next root
    // are fed again.
    std::vector<int32_t> path;
    for (int32_t node = tree.size() - 1; node > 0; node = tree.parents[node]) path.insert(path.begin(), tree.tokens[node]);
    REQUIRE(path.size() >= 2);
    committed.push_back(root);
    committed.insert(committed.end(), path.begin(), path.end());
    const int64_t next = policy.drafter->first_round_rows(committed);
    CHECK(next <= 2);
    kept_rows += static_cast<int64_t>(path.size()) + 1 - next;
  }
  CHECK(kept_rows >= 5);
}

TEST_CASE("tree acceptance rates: the prior, then the evidence, per bucket and rank", "[spec][tree-drafter]") {
  TreeAcceptance a;
  CHECK(TreeAcceptance::bucket(0.01) == 0);
  CHECK(TreeAcceptance::bucket(0.05) == 1);
  CHECK(TreeAcceptance::bucket(0.99) == TreeAcceptance::kBuckets - 1);
  CHECK(a.rate(2, 0) == Approx(0.6));
  CHECK(a.rate(2, 1) == Approx(0.15));
  // A rank-2 child is accepted when ranks 0 and 1 were not and it was.
  CHECK(a.child_share(2, 2) == Approx(0.4 * 0.85 * 0.15));
  for (int i = 0; i < 50; ++i) {
    a.observe(2, 0, true);
    a.decay();
  }
  CHECK(a.rate(2, 0) > 0.95);
  CHECK(a.rate(3, 0) == Approx(0.6));  // other buckets keep the prior
  CHECK(a.rate(2, TreeAcceptance::kRanks + 3) == a.rate(2, TreeAcceptance::kRanks - 1));  // deep ranks share a rate
}

// The drafter learns from the step that verified its last tree, also when a pruner removed some
// of its nodes (keep_only keeps order and parents), and ignores a tree that is not its own (a
// retrieval drafter's step, when it is SAM's or ReSpec's fallback).
TEST_CASE("the tree drafter learns from the verdicts on its own trees, pruned or not, and only those", "[spec][tree-drafter]") {
  auto cfg = test::tiny_config("llama");
  std::shared_ptr<const LlamaModel> model = test::load_model(test::write_model("tree-learning", cfg, DType::F32, 21), false, 1);
  ModelTreeDrafter drafter(model, TreeDraftOptions{3, 3, 9});
  std::vector<int32_t> committed{3, 1, 4, 1, 5, 9, 2, 6};
  drafter.begin(committed, 0);
  auto rates = [&] {
    std::vector<double> r;
    for (int b = 0; b < TreeAcceptance::kBuckets; ++b)
      for (int k = 0; k < TreeAcceptance::kRanks; ++k) r.push_back(drafter.acceptance().rate(b, k));
    return r;
  };
  const std::vector<double> prior = rates();
  const std::vector<int32_t> none;
  const TargetOutputs outputs;

  // Every child of the root rejected, on a copy without the tree's last node.
  const DraftTree tree = drafter.propose({committed, 5, 9, 3});
  REQUIRE(tree.size() > 2);
  std::vector<char> keep(static_cast<size_t>(tree.size()), 1);
  keep.back() = 0;
  const DraftTree pruned = tree.keep_only(keep);
  AcceptResult rejected;
  rejected.path = {0};
  rejected.verdicts.assign(static_cast<size_t>(pruned.size()), NodeVerdict::NotReached);
  rejected.verdicts[0] = NodeVerdict::Accepted;
  for (int32_t c : pruned.children(0)) rejected.verdicts[c] = NodeVerdict::Rejected;
  drafter.observe(StepFeedback{pruned, rejected, none, outputs});
  const std::vector<double> learned = rates();
  CHECK(learned != prior);
  for (size_t i = 0; i < prior.size(); ++i) CHECK(learned[i] <= prior[i]);

  // A tree that is not this drafter's: nothing learned (and its last proposal is spent).
  const DraftTree again = drafter.propose({committed, 5, 9, 3});
  std::vector<int32_t> proposed;
  for (int32_t c : again.children(0)) proposed.push_back(again.tokens[c]);
  int32_t other = 0;
  while (std::find(proposed.begin(), proposed.end(), other) != proposed.end()) ++other;
  DraftTree foreign(5);
  foreign.add(0, other, DraftSource::Retrieval);
  AcceptResult accepted;
  accepted.path = {0, 1};
  accepted.verdicts = {NodeVerdict::Accepted, NodeVerdict::Accepted};
  drafter.observe(StepFeedback{foreign, accepted, none, outputs});
  CHECK(rates() == learned);
  drafter.observe(StepFeedback{tree, rejected, none, outputs});  // no proposal pending
  CHECK(rates() == learned);
}

// At T > 0 every child is a draw from its parent's stored distribution (what the acceptor's
// multi-candidate rule needs), shaped like the target's: its q is that row's value at its token,
// its score the path's sum of log q; no drawn child is dropped, so the tree grows level by level
// within the budget. A seed reproduces the tree; another seed draws another.
TEST_CASE("at T > 0 the tree drafter's children are draws from the distributions it stores", "[spec][tree-drafter]") {
  auto cfg = test::tiny_config("llama");
  std::shared_ptr<const LlamaModel> model = test::load_model(test::write_model("tree-sampled", cfg, DType::F32, 21), false, 1);
  SamplingParams sampling;
  sampling.temperature = 0.8;
  sampling.top_k = 20;
  const TreeDraftOptions shape{3, 4, 10};
  const std::vector<int32_t> committed{3, 1, 4, 1, 5, 9, 2, 6};
  auto draft = [&](uint64_t seed) {
    ModelTreeDrafter drafter(model, shape, sampling);
    drafter.begin(committed, seed);
    return drafter.propose({committed, 5, shape.nodes, shape.depth});
  };
  const DraftTree tree = draft(7);
  REQUIRE(tree.size() > 2);
  CHECK(tree.size() - 1 <= shape.nodes);
  bool wide = false;
  for (int32_t i = 1; i < tree.size(); ++i) {
    const int32_t parent = tree.parents[i];
    REQUIRE(tree.child_q[parent]);
    const std::vector<float>& q = *tree.child_q[parent];
    REQUIRE(static_cast<int64_t>(q.size()) == cfg.vocab_size);
    CHECK(q[tree.tokens[i]] > 0);
    CHECK(tree.q[i] == q[tree.tokens[i]]);
    const float parent_score = parent == 0 ? 0.0f : tree.scores[parent];
    CHECK(tree.scores[i] == Approx(parent_score + std::log(q[tree.tokens[i]])).epsilon(1e-5));
    // top-k 20: the row is zero outside the 20 most probable tokens
    CHECK(std::count_if(q.begin(), q.end(), [](float v) { return v > 0; }) == 20);
    wide = wide || tree.children(parent).size() > 1;
  }
  CHECK(wide);  // the prior's rates give siblings where 10 nodes exceed the depth of 4
  const DraftTree same = draft(7), other = draft(8);
  CHECK(same.tokens == tree.tokens);
  CHECK(other.tokens != tree.tokens);
}
