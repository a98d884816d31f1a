// Prompt Lookup Decoding oracle: at every step of simulated requests, the indexed drafter's chain
// equals a literal brute-force rendering of the reference rules (the original's full-length rule
// and HF's truncated one, earliest and latest match), within the node and depth budgets.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <tuple>
#include <vector>

#include "token_strings.h"
#include "speculative/pld_drafter.h"
#include "util/error.h"

using namespace specd;

namespace {

using specd::test::Tokens;
using specd::test::copy_heavy_tokens;
using specd::test::random_tokens;


// The reference search over S = committed + root, window by window (algorithms.md §2), then cut
// to the budget.
Tokens brute_pld(const Tokens& committed, int32_t root, const PldOptions& o, int budget) {
  Tokens s = committed;
  s.push_back(root);
  const int L = static_cast<int>(s.size());
  for (int n = o.max_ngram; n >= o.min_ngram; --n) {
    if (n > L) continue;
    for (int k = 0; k <= L - n; ++k) {
      const int idx = o.match == PldMatch::Earliest ? k : L - n - k;
      if (!std::equal(s.begin() + idx, s.begin() + idx + n, s.end() - n)) continue;
      const int start = idx + n;
      int end = start + o.num_pred_tokens;
      bool valid;
      if (o.allow_truncated) {  // HF: end = min(start + num, L); start < end
        end = std::min(end, L);
        valid = start < end;
      } else {  // original: end <= L and start < L - n
        valid = end <= L && start < L - n;
      }
      if (!valid) continue;
      end = std::min(end, start + std::max(budget, 0));
      return Tokens(s.begin() + start, s.begin() + end);
    }
  }
  return {};
}

Tokens chain_tokens(const DraftTree& tree) {
  tree.check();
  Tokens tokens;
  for (int32_t i = 1; i < tree.size(); ++i) {
    REQUIRE(tree.parents[i] == i - 1);  // a chain
    REQUIRE(tree.sources[i] == DraftSource::Retrieval);
    REQUIRE(tree.q[i] == 1.0f);
    tokens.push_back(tree.tokens[i]);
  }
  return tokens;
}

// One request over `text`: the first `prompt` tokens are the prompt, then each step commits the
// root and a random number of following tokens (as if they had been accepted).
void simulate(const Tokens& text, int prompt, const PldOptions& options, std::mt19937& rng, bool call_observe) {
  PldDrafter drafter(options);
  drafter.begin(Tokens(text.begin(), text.begin() + prompt), 0);
  Tokens committed(text.begin(), text.begin() + prompt);
  size_t pos = prompt;
  while (pos < text.size()) {
    const int32_t root = text[pos];
    const int max_nodes = static_cast<int>(rng() % 14);
    const int max_depth = rng() % 5 == 0 ? static_cast<int>(rng() % 4) : 64;
    const DraftTree tree = drafter.propose(DraftRequest{committed, root, max_nodes, max_depth});
    INFO("committed " << committed.size() << " root " << root << " budget " << max_nodes << "/" << max_depth);
    const Tokens drafted = chain_tokens(tree);
    REQUIRE(tree.tokens[0] == root);
    REQUIRE(static_cast<int>(drafted.size()) <= std::min(max_nodes, max_depth));
    REQUIRE(drafted == brute_pld(committed, root, options, std::min(max_nodes, max_depth)));

    const size_t accepted = std::min(text.size() - pos, size_t{1} + rng() % 5);
    const Tokens now(text.begin() + pos, text.begin() + pos + accepted);
    committed.insert(committed.end(), now.begin(), now.end());
    if (call_observe) {
      const AcceptResult result;
      drafter.observe(StepFeedback{tree, result, now, TargetOutputs{}});
    }
    pos += accepted;
  }
}

std::vector<PldOptions> option_grid() {
  std::vector<PldOptions> grid;
  for (PldMatch match : {PldMatch::Earliest, PldMatch::Latest})
    for (bool truncated : {true, false})
      for (auto [min_n, max_n, num] : {std::tuple{1, 3, 10}, std::tuple{1, 1, 4}, std::tuple{2, 4, 1}, std::tuple{1, 2, 7}}) {
        PldOptions o;
        o.match = match;
        o.allow_truncated = truncated;
        o.min_ngram = min_n;
        o.max_ngram = max_n;
        o.num_pred_tokens = num;
        grid.push_back(o);
      }
  return grid;
}

}  // namespace

TEST_CASE("PLD drafts what the reference rules draft", "[spec][pld]") {
  std::mt19937 rng(21);
  for (const PldOptions& options : option_grid()) {
    INFO("ngram " << options.min_ngram << ".." << options.max_ngram << " num " << options.num_pred_tokens
                  << (options.match == PldMatch::Earliest ? " earliest" : " latest")
                  << (options.allow_truncated ? " truncated" : " full-length"));
    for (int alphabet : {2, 4, 150000}) simulate(random_tokens(rng, 250, alphabet), 30, options, rng, true);
    for (int alphabet : {5, 150000}) simulate(copy_heavy_tokens(rng, 250, alphabet), 60, options, rng, true);
    Tokens periodic(120);
    for (size_t i = 0; i < periodic.size(); ++i) periodic[i] = static_cast<int32_t>(i % 3);
    simulate(periodic, 1, options, rng, true);
    simulate(random_tokens(rng, 40, 3), 0, options, rng, true);  // empty prompt
  }
}

TEST_CASE("PLD catches up from the request when observe is not called", "[spec][pld]") {
  std::mt19937 rng(22);
  for (const PldOptions& options : option_grid()) simulate(copy_heavy_tokens(rng, 200, 6), 20, options, rng, false);
}

TEST_CASE("PLD defaults and simple cases", "[spec][pld]") {
  const PldOptions defaults;
  REQUIRE(defaults.max_ngram == 3);
  REQUIRE(defaults.min_ngram == 1);
  REQUIRE(defaults.num_pred_tokens == 10);
  REQUIRE(defaults.match == PldMatch::Earliest);
  REQUIRE(defaults.allow_truncated);

  PldDrafter drafter;
  REQUIRE(drafter.name() == "pld");
  const Tokens prompt{5, 6, 7, 8, 9, 5, 6};
  drafter.begin(prompt, 0);
  // Pattern "5 6 7" (committed tail + root) occurred at 0: copy what followed, up to the text end.
  DraftTree tree = drafter.propose(DraftRequest{prompt, 7, 60, 60});
  REQUIRE(chain_tokens(tree) == Tokens{8, 9, 5, 6, 7});
  REQUIRE(drafter.last_ngram() == 3);
  // The budget cuts the chain.
  tree = drafter.propose(DraftRequest{prompt, 7, 2, 60});
  REQUIRE(chain_tokens(tree) == Tokens{8, 9});
  tree = drafter.propose(DraftRequest{prompt, 7, 60, 1});
  REQUIRE(chain_tokens(tree) == Tokens{8});
  tree = drafter.propose(DraftRequest{prompt, 7, 0, 60});
  REQUIRE(tree.size() == 1);
  // No occurrence of the root anywhere: root alone.
  tree = drafter.propose(DraftRequest{prompt, 42, 60, 60});
  REQUIRE(tree.size() == 1);
  REQUIRE(drafter.last_ngram() == 0);
}

TEST_CASE("PLD drafts what the budget says its match class pays for", "[spec][pld]") {
  PldDrafter drafter;
  const Tokens prompt{5, 6, 7, 8, 9, 5, 6};
  drafter.begin(prompt, 0);
  DraftBudget budget(CostCurve({{1, 1.0}, {2, 1.2}, {4, 1.6}, {8, 2.4}}));
  for (int i = 0; i < 30; ++i) budget.observe(3, 4, 0);  // 3-gram matches: always rejected
  DraftRequest request{prompt, 7, 60, 60};
  request.budget = &budget;
  DraftTree tree = drafter.propose(request);
  CHECK(drafter.last_ngram() == 3);
  CHECK(tree.size() == 1);
  for (int i = 0; i < 60; ++i) budget.observe(3, 4, 4);  // ...until they are accepted whole
  tree = drafter.propose(request);
  CHECK(chain_tokens(tree) == Tokens{8, 9, 5, 6, 7});
}

TEST_CASE("PLD begin() forgets the previous request", "[spec][pld]") {
  PldDrafter drafter;
  const Tokens first{1, 2, 3, 4, 5, 6};
  drafter.begin(first, 0);
  REQUIRE(drafter.propose(DraftRequest{first, 1, 10, 10}).size() > 1);
  const Tokens second{9, 9, 8};
  drafter.begin(second, 0);
  REQUIRE(drafter.propose(DraftRequest{second, 1, 10, 10}).size() == 1);  // 1 was only in the first request
  REQUIRE(chain_tokens(drafter.propose(DraftRequest{second, 9, 10, 10})) == Tokens{9, 8, 9});
}

TEST_CASE("PLD rejects inconsistent options", "[spec][pld]") {
  PldOptions o;
  o.min_ngram = 0;
  REQUIRE_THROWS_AS(PldDrafter(o), InputError);
  o = PldOptions{};
  o.min_ngram = 3;
  o.max_ngram = 2;
  REQUIRE_THROWS_AS(PldDrafter(o), InputError);
  o = PldOptions{};
  o.num_pred_tokens = 0;
  REQUIRE_THROWS_AS(PldDrafter(o), InputError);
}
