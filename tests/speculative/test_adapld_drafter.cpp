// AdaPLD's drafter against a literal brute-force rendering of the AdaPLD paper §3 on simulated
// requests: random texts, random target logits rows, hidden states and embeddings. At every step
// the anchor search (lexical, then semantic), the reranking, the branches (the main path's first
// token excluded), the successors and the budget order equal a scan over every position; the
// engine's feedback is fed as speculative.cpp feeds it (prefill rows, then the committed path's
// tree rows and hidden rows).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include <nlohmann/json.hpp>

#include "speculative/adapld_drafter.h"
#include "token_strings.h"

using namespace specd;

namespace {

using specd::test::Tokens;

double dot(const float* a, const float* b, int n) {
  double s = 0;
  for (int i = 0; i < n; ++i) s += static_cast<double>(a[i]) * b[i];
  return s;
}

// Cosine as the drafter rounds it (norms kept as floats); 0 against a zero vector.
double cosine(const float* a, const float* b, int n) {
  const float na = static_cast<float>(std::sqrt(dot(a, a, n))), nb = static_cast<float>(std::sqrt(dot(b, b, n)));
  if (na == 0 || nb == 0) return 0.0;
  return dot(a, b, n) / (static_cast<double>(na) * nb);
}

// The simulated target: per position of the memory a logits row and a hidden state; a fixed
// embedding table.
struct World {
  int vocab = 0, hidden = 0, embed = 0;
  std::vector<std::vector<float>> logits;  // per committed position
  std::vector<std::vector<float>> states;  // per committed position
  std::vector<std::vector<float>> table;   // per token

  std::vector<float> random_row(std::mt19937& rng, int n, bool coarse) {
    std::vector<float> row(n);
    std::uniform_int_distribution<int> small(-1, 1);
    std::normal_distribution<float> normal(0, 1);
    // Coarse rows ({-1, 0, 1}) make equal cosines, equal logits and zero vectors common: the tie rules matter.
    for (float& x : row) x = coarse ? static_cast<float>(small(rng)) : normal(rng);
    return row;
  }
};

struct Expected {
  AdaPldRetrieval kind = AdaPldRetrieval::None;
  int anchor = -1;
  Tokens main, branches;
  std::vector<int> successors;  // per branch: its token, or -1
};

AdaPldDrafter::Candidates brute_retrieve(const World& w, const Tokens& memory, int32_t query, bool semantic, double tau) {
  AdaPldDrafter::Candidates out;
  const int end = static_cast<int>(memory.size()) - 1;
  for (int j = 0; j < end; ++j)
    if (memory[j] == query) out.positions.push_back(j);
  if (!out.positions.empty()) {
    out.kind = AdaPldRetrieval::Lexical;
    return out;
  }
  if (!semantic) return out;
  for (int j = 0; j < end; ++j) {
    const double c = static_cast<float>(cosine(w.table[memory[j]].data(), w.table[query].data(), w.embed));
    if (c >= tau) out.positions.push_back(j);
  }
  if (!out.positions.empty()) out.kind = AdaPldRetrieval::Semantic;
  return out;
}

int brute_rerank(const World& w, const std::vector<int32_t>& positions, int reference) {
  int best = -1;
  double best_score = -std::numeric_limits<double>::infinity();
  for (int j : positions) {
    const double s = j == 0 ? -std::numeric_limits<double>::infinity()
                            : cosine(w.states[j - 1].data(), w.states[reference].data(), w.hidden);
    if (best < 0 || s >= best_score) {  // ascending positions: >= keeps the latest of equals
      best = j;
      best_score = s;
    }
  }
  return best;
}

Tokens brute_top(const std::vector<float>& row, int k) {
  Tokens ids(row.size());
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int32_t>(i);
  std::stable_sort(ids.begin(), ids.end(), [&](int32_t a, int32_t b) { return row[a] > row[b]; });
  ids.resize(std::min<size_t>(k, ids.size()));
  return ids;
}

Expected brute_adapld(const World& w, const Tokens& committed, int32_t root, const AdaPldOptions& o) {
  Tokens memory = committed;
  memory.push_back(root);
  const int end = static_cast<int>(committed.size());
  Expected e;
  const auto anchors = brute_retrieve(w, memory, root, o.semantic, o.tau_sim);
  e.kind = anchors.kind;
  if (e.kind == AdaPldRetrieval::None) return e;
  e.anchor = brute_rerank(w, anchors.positions, end - 1);
  const bool lexical = e.kind == AdaPldRetrieval::Lexical;
  if (lexical)
    for (int p = e.anchor + 1; p <= std::min(e.anchor + o.max_copy, end); ++p) e.main.push_back(memory[p]);
  if (o.use_branches)
    for (int32_t id : brute_top(w.logits[e.anchor], o.branches + 1)) {
      if (!e.main.empty() && id == e.main[0]) continue;
      if (static_cast<int>(e.branches.size()) < o.branches) e.branches.push_back(id);
    }
  for (int32_t b : e.branches) {
    int successor = -1;
    if (o.use_successors && (!o.successors_on_semantic_only || !lexical)) {
      const int t = brute_rerank(w, brute_retrieve(w, memory, b, o.semantic, o.tau_sim).positions, e.anchor);
      if (t >= 0) successor = memory[t + 1];
    }
    e.successors.push_back(successor);
  }
  return e;
}

// The tree the budget rule builds from the expected parts: the main path, then the branches,
// then successors in branch order; within `nodes` nodes and `depth` levels.
DraftTree brute_tree(const Expected& e, int32_t root, int nodes, int depth) {
  DraftTree tree(root);
  if (e.kind == AdaPldRetrieval::None || nodes <= 0 || depth <= 0) return tree;
  std::vector<std::pair<int, int>> branch_nodes;  // (node, branch index)
  int parent = 0;
  for (int i = 0; i < static_cast<int>(e.main.size()) && i < depth && tree.size() - 1 < nodes; ++i)
    parent = tree.add(parent, e.main[i], DraftSource::Retrieval);
  for (int b = 0; b < static_cast<int>(e.branches.size()) && tree.size() - 1 < nodes; ++b)
    branch_nodes.emplace_back(tree.add(0, e.branches[b], DraftSource::Branch), b);
  if (depth >= 2)
    for (auto [node, index] : branch_nodes) {
      if (tree.size() - 1 >= nodes) break;
      if (e.successors[index] >= 0) tree.add(node, e.successors[index], DraftSource::Successor);
    }
  return tree;
}

}  // namespace

TEST_CASE("adapld's anchors, reranking, branches, successors and budget equal a brute-force scan", "[adapld][oracle]") {
  const bool coarse = GENERATE(false, true);
  const bool semantic = GENERATE(true, false);
  const int seed = GENERATE(range(1, 7));
  CAPTURE(coarse, semantic, seed);
  std::mt19937 rng(seed * 7919 + coarse * 13 + semantic);
  World w;
  w.vocab = 40;
  w.hidden = 6;
  w.embed = 5;
  for (int t = 0; t < w.vocab; ++t) w.table.push_back(w.random_row(rng, w.embed, coarse));

  AdaPldOptions o;
  o.branches = 1 + seed % 5;
  o.max_copy = 1 + seed * 3 % 9;
  o.tau_sim = coarse ? 0.3 : 0.1 * (seed % 5);
  o.semantic = semantic;
  o.successors_on_semantic_only = seed % 3 == 0;
  World* world = &w;
  EmbeddingLookup lookup{w.embed, [world](int32_t token, float* out) { std::copy(world->table[token].begin(), world->table[token].end(), out); }};
  AdaPldDrafter drafter(o, 0, lookup);
  REQUIRE(drafter.needs().prefill);
  REQUIRE(drafter.needs().target_logits);
  REQUIRE(drafter.needs().hidden_layers == std::vector<int>{0});

  // Words from the first 24 tokens (half the roots miss lexically), copied spans for long matches.
  Tokens committed = seed % 2 ? specd::test::copy_heavy_tokens(rng, 30, 24) : specd::test::random_tokens(rng, 30, 24);
  drafter.begin(committed, 0);
  std::vector<float> logits, hidden;
  for (size_t p = 0; p < committed.size(); ++p) {
    w.logits.push_back(w.random_row(rng, w.vocab, coarse));
    w.states.push_back(w.random_row(rng, w.hidden, coarse));
    logits.insert(logits.end(), w.logits.back().begin(), w.logits.back().end());
    hidden.insert(hidden.end(), w.states.back().begin(), w.states.back().end());
  }
  TargetOutputs prefill;
  prefill.logits = logits.data();
  prefill.rows = static_cast<int64_t>(committed.size());
  prefill.vocab = w.vocab;
  prefill.hidden = {hidden};
  prefill.hidden_size = w.hidden;
  drafter.observe_prefill(prefill);

  std::uniform_int_distribution<int32_t> any_token(0, w.vocab - 1);
  int32_t root = any_token(rng);
  int lexical = 0, semantic_hits = 0, none = 0, branch_reuse = 0;
  for (int step = 0; step < 60; ++step) {
    CAPTURE(step);
    const int nodes = step % 4 == 0 ? 3 : step % 4 == 1 ? 7 : 64, depth = step % 5 == 0 ? 1 : 40;
    const Expected e = brute_adapld(w, committed, root, o);

    // The parts, each against its own scan.
    const auto anchors = drafter.retrieve(root, static_cast<int32_t>(committed.size()));
    Tokens memory = committed;
    memory.push_back(root);
    const auto brute_anchors = brute_retrieve(w, memory, root, semantic, o.tau_sim);
    CHECK(anchors.kind == brute_anchors.kind);
    CHECK(anchors.positions == brute_anchors.positions);
    if (!anchors.positions.empty())
      CHECK(drafter.rerank(anchors.positions, static_cast<int32_t>(committed.size()) - 1) == e.anchor);
    if (e.anchor >= 0) CHECK(drafter.top_ids(e.anchor) == brute_top(w.logits[e.anchor], o.branches + 1));
    if (!e.main.empty()) CHECK(std::find(e.branches.begin(), e.branches.end(), e.main[0]) == e.branches.end());

    DraftRequest request{committed, root, nodes, depth};
    const DraftTree tree = drafter.propose(request);
    const DraftTree expected = brute_tree(e, root, nodes, depth);
    tree.check();
    CHECK(tree.tokens == expected.tokens);
    CHECK(tree.parents == expected.parents);
    CHECK(tree.sources == expected.sources);
    for (float q : tree.q) CHECK(q == 1.0f);
    int agreement = 1;  // the anchor, then the tokens before it that equal those before the root
    while (e.kind == AdaPldRetrieval::Lexical && agreement < 3 && e.anchor - agreement >= 0 &&
           memory[e.anchor - agreement] == memory[memory.size() - 1 - agreement])
      ++agreement;
    CHECK(drafter.proposal_class() == (e.kind == AdaPldRetrieval::Lexical ? agreement : e.kind == AdaPldRetrieval::Semantic ? 4 : 5));
    lexical += e.kind == AdaPldRetrieval::Lexical;
    semantic_hits += e.kind == AdaPldRetrieval::Semantic;
    none += e.kind == AdaPldRetrieval::None;

    // The target accepts a random root-to-node path; the engine hands back every tree node's
    // logits row and the path's hidden rows.
    std::vector<int32_t> path{0};
    if (tree.size() > 1 && rng() % 3 != 0) {
      int32_t node = 1 + static_cast<int32_t>(rng() % (tree.size() - 1));
      path = tree.path_to(node);
    }
    std::vector<std::vector<float>> node_logits;
    std::vector<float> all_logits, path_hidden;
    for (int32_t i = 0; i < tree.size(); ++i) {
      node_logits.push_back(w.random_row(rng, w.vocab, coarse));
      all_logits.insert(all_logits.end(), node_logits.back().begin(), node_logits.back().end());
    }
    std::vector<int32_t> committed_now;
    for (int32_t node : path) {
      committed_now.push_back(tree.tokens[node]);
      w.logits.push_back(node_logits[node]);
      w.states.push_back(w.random_row(rng, w.hidden, coarse));
      path_hidden.insert(path_hidden.end(), w.states.back().begin(), w.states.back().end());
    }
    AcceptResult result;
    result.path = path;
    result.next_token = any_token(rng);
    TargetOutputs outputs;
    outputs.logits = all_logits.data();
    outputs.rows = tree.size();
    outputs.vocab = w.vocab;
    outputs.hidden = {path_hidden};
    outputs.hidden_size = w.hidden;
    drafter.observe(StepFeedback{tree, result, committed_now, outputs});
    committed.insert(committed.end(), committed_now.begin(), committed_now.end());

    const DraftingDetail detail = drafter.step_detail();
    CHECK(*drafting_value(detail, "retrieval") == DetailValue(adapld_retrieval_name(e.kind)));
    CHECK(*drafting_value(detail, "anchor") == DetailValue(e.anchor));
    const std::string reuse = tree.size() == 1       ? "none"
                              : path.size() == 1     ? "mismatch"
                              : tree.sources[path[1]] == DraftSource::Retrieval ? "main"
                              : path.size() == 3     ? "branch+succ"
                                                     : "branch";
    CHECK(*drafting_value(detail, "reuse") == DetailValue(reuse));
    branch_reuse += reuse == "branch" || reuse == "branch+succ";
    root = result.next_token;
  }
  // Every path of the oracle ran.
  CHECK(lexical > 0);
  CHECK(none + semantic_hits > 0);
  CHECK(branch_reuse > 0);
}

TEST_CASE("adapld drafts only the root when nothing matches, and the ablations drop their parts", "[adapld]") {
  AdaPldOptions o;
  o.semantic = false;
  AdaPldDrafter drafter(o, 0, {});
  const Tokens prompt{1, 2, 3, 1, 2};
  drafter.begin(prompt, 0);
  DraftTree tree = drafter.propose(DraftRequest{prompt, 9, 50, 50});
  CHECK(tree.size() == 1);
  CHECK(drafter.proposal_class() == 5);

  // No hidden states or logits kept (a text the engine never fed): the lexical hit still copies,
  // every candidate scores -inf, and the latest wins.
  tree = drafter.propose(DraftRequest{prompt, 1, 50, 50});  // anchors 0 and 3: 3 wins
  CHECK(tree.tokens == Tokens{1, 2, 1});                     // M_4, then M_5 = the root
  CHECK(tree.parents == std::vector<int32_t>{-1, 0, 1});
  CHECK(drafter.proposal_class() == 1);  // M_2 = 3 differs from M_4 = 2: the anchor alone agrees
  tree = drafter.propose(DraftRequest{prompt, 3, 2, 50});  // anchor 2, two nodes of M_3.. = 1, 2, 3
  CHECK(tree.tokens == Tokens{3, 1, 2});
  CHECK(drafter.proposal_class() == 3);  // 1, 2, 3 before and at the anchor; 1, 2 before the root 3
  o.use_branches = false;
  AdaPldDrafter no_branches(o, 0, {});
  CHECK_FALSE(no_branches.needs().target_logits);
}

TEST_CASE("adapld skips the semantic search when the budget grants its class no nodes", "[adapld]") {
  // Token 9 never occurs; its embedding is close to token 1's.
  const std::vector<std::vector<float>> table{{0, 0}, {1, 0}, {0, 1}, {-1, 0}, {}, {}, {}, {}, {}, {1, 0.1f}};
  int lookups = 0;
  EmbeddingLookup lookup{2, [&](int32_t token, float* out) {
                           ++lookups;
                           std::copy(table[token].begin(), table[token].end(), out);
                         }};
  AdaPldOptions o;
  o.tau_sim = 0.5;
  AdaPldDrafter drafter(o, 0, lookup);
  const Tokens prompt{1, 2, 3, 1, 2};
  drafter.begin(prompt, 0);
  DraftBudgetOptions no_probes;
  no_probes.probe_interval = 0;

  // Verifying a drafted token costs 50 one-token steps: no class pays for a node.
  DraftBudget costly(CostCurve({{1, 1.0}, {2, 50.0}, {64, 3000.0}}), no_probes);
  DraftRequest request{prompt, 9, 8, 8, &costly};
  REQUIRE(request.nodes_for(AdaPldDrafter::kSemanticClass) == 0);
  DraftTree tree = drafter.propose(request);
  CHECK(tree.size() == 1);
  CHECK(drafter.proposal_class() == AdaPldDrafter::kSemanticClass);
  CHECK(*drafting_value(drafter.step_detail(), "retrieval") == DetailValue("skipped"));
  CHECK(lookups == 0);

  // Verification as cheap as one token: the search runs and finds token 1's positions.
  DraftBudget cheap(CostCurve({{1, 1.0}, {64, 1.0}}), no_probes);
  request.budget = &cheap;
  REQUIRE(request.nodes_for(AdaPldDrafter::kSemanticClass) > 0);
  tree = drafter.propose(request);
  CHECK(drafter.proposal_class() == AdaPldDrafter::kSemanticClass);
  const DraftingDetail detail = drafter.step_detail();
  CHECK(*drafting_value(detail, "retrieval") == DetailValue("semantic"));
  CHECK(*drafting_value(detail, "candidates") == DetailValue(2));  // positions 0 and 3
  CHECK(lookups > 0);
  CHECK(drafter.retrieve(9, 5).positions == std::vector<int32_t>{0, 3});
  CHECK(drafter.retrieve(9, 5, false).kind == AdaPldRetrieval::None);
}

TEST_CASE("with a budget, adapld drafts a branch only while its learned acceptance pays for the row", "[adapld]") {
  AdaPldOptions o;
  o.semantic = false;
  o.branches = 3;
  o.max_copy = 1;  // a one-token main path: the budget's second node goes to a branch
  AdaPldDrafter drafter(o, 0, {});
  const int vocab = 8;
  // Every logits row ranks the tokens 0, 1, 2, ...: the anchor's branches are 0, 2, 3 after main 1.
  std::vector<float> row(vocab);
  for (int v = 0; v < vocab; ++v) row[v] = -static_cast<float>(v);
  Tokens committed{1, 1, 1, 1};
  drafter.begin(committed, 0);
  std::vector<float> prefill_logits;
  for (size_t p = 0; p < committed.size(); ++p) prefill_logits.insert(prefill_logits.end(), row.begin(), row.end());
  TargetOutputs prefill;
  prefill.logits = prefill_logits.data();
  prefill.rows = static_cast<int64_t>(committed.size());
  prefill.vocab = vocab;
  drafter.observe_prefill(prefill);

  // A second verified row costs a fifth of a step; the main path's class stays at the prior.
  DraftBudget budget(CostCurve({{1, 1.0}, {2, 1.2}, {3, 1.4}, {8, 2.4}}));
  REQUIRE(budget.nodes_for(1, 8) >= 2);
  // One step: root 1, the target accepts `accept` (0: nothing, 1: the main path, 2: the branch).
  auto step = [&](int accept) {
    const DraftTree tree = drafter.propose(DraftRequest{committed, 1, 8, 8, &budget});
    int32_t branch = -1;
    for (int32_t n = 1; n < tree.size(); ++n)
      if (tree.sources[n] == DraftSource::Branch && branch < 0) branch = n;
    std::vector<int32_t> path{0};
    if (accept == 1 && tree.size() > 1) path.push_back(1);
    if (accept == 2 && branch > 0) path.push_back(branch);
    Tokens now;
    std::vector<float> logits;
    for (int32_t n : path) now.push_back(tree.tokens[n]);
    for (int32_t n = 0; n < tree.size(); ++n) logits.insert(logits.end(), row.begin(), row.end());
    AcceptResult result;
    result.path = path;
    result.next_token = 1;
    TargetOutputs outputs;
    outputs.logits = logits.data();
    outputs.rows = tree.size();
    outputs.vocab = vocab;
    drafter.observe(StepFeedback{tree, result, now, outputs});
    committed.insert(committed.end(), now.begin(), now.end());
    return branch > 0;
  };

  CHECK(step(1));  // at the prior (0.6) a branch pays for its row
  int drafted = 1;
  for (int i = 0; i < 40; ++i) drafted += step(1);  // ...and is never accepted
  CHECK(drafted < 20);
  CHECK_FALSE(step(1));  // its rate is now far below what the row costs
  // Steps without branches: the evidence fades and a branch is tried again (here the target takes
  // it, and from then on every branch drafted).
  int steps = 0;
  while (!step(2) && steps < 2000) ++steps;
  CHECK(steps > 10);
  CHECK(steps < 2000);
  for (int i = 0; i < 20; ++i) CHECK(step(2));

  // Without a budget the paper's tree: every branch the node count allows.
  const DraftTree tree = drafter.propose(DraftRequest{committed, 1, 8, 8});
  CHECK(std::count(tree.sources.begin(), tree.sources.end(), DraftSource::Branch) == 3);
}
