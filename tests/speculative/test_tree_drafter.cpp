// The draft-model tree drafter (sd-tree) against a reference: EAGLE-2's selection recomputed here
// from chain forwards of each node's path on a fresh cache. A token's logits are bit-identical
// in a chain and in a tree (test_forward_oracles.cpp), so the trees must be equal node for node.
#include "catch_torch.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "methods/method_registry.h"
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
  double score;           // log-probability of the path
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

// EAGLE-2: each level expands the top_k frontier nodes by path score into top_k children each,
// then the best `nodes` nodes of the pool whose parents are taken form the tree.
DraftTree reference_tree(const LlamaModel& model, const std::vector<int32_t>& committed, int32_t root,
                         const TreeDraftOptions& options) {
  std::vector<int32_t> context = committed;
  context.push_back(root);
  std::vector<Node> pool;
  std::vector<int32_t> frontier;
  ForwardRequest request;
  request.tokens.assign(context.begin(), context.end());
  request.logits = LogitsWanted::Last;
  KvCache cache = model.new_cache();
  for (auto [token, logp] : top_log_probs(test::tensor(model.forward(cache, request).logits)[0].contiguous(), options.top_k)) {
    frontier.push_back(static_cast<int32_t>(pool.size()));
    pool.push_back({token, -1, logp});
  }
  for (int32_t level = 2; level <= options.depth; ++level) {
    std::vector<int32_t> children;
    for (int32_t node : frontier)
      for (auto [token, logp] : top_log_probs(path_logits(model, context, pool, node), options.top_k)) {
        children.push_back(static_cast<int32_t>(pool.size()));
        pool.push_back({token, node, pool[node].score + logp});
      }
    std::stable_sort(children.begin(), children.end(), [&](int32_t a, int32_t b) { return pool[a].score > pool[b].score; });
    children.resize(static_cast<size_t>(options.top_k));
    std::sort(children.begin(), children.end());
    frontier = children;
  }
  std::vector<int32_t> order(pool.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return pool[a].score > pool[b].score; });
  std::vector<int32_t> index(pool.size(), -1);
  int32_t taken = 0;
  for (int32_t node : order) {
    if (taken == options.nodes) break;
    if (pool[node].parent >= 0 && index[pool[node].parent] < 0) continue;
    index[node] = 0;  // taken; numbered below in pool order, which puts parents first
    ++taken;
  }
  DraftTree tree(root);
  for (size_t node = 0; node < pool.size(); ++node)
    if (index[node] >= 0)
      index[node] = tree.add(pool[node].parent < 0 ? 0 : index[pool[node].parent], pool[node].token, DraftSource::Model);
  return tree;
}

}  // namespace

TEST_CASE("sd-tree drafts the EAGLE-2 tree of its model's path logits", "[spec][tree-drafter]") {
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
    const DraftTree expected = reference_tree(*model, committed, root, options.tree);
    CHECK(tree.tokens == expected.tokens);
    CHECK(tree.parents == expected.parents);
    committed.push_back(root);
    committed.push_back(tree.tokens.back());
  }
}
