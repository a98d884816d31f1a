// SAM-Decoding drafter: the automaton drafts exactly when the match (root included) reaches the
// threshold, and then drafts what a brute-force search with SAM-Decoding's to_anc rule gives;
// otherwise the fallback drafts. The fallback sees every begin/observe; budgets cap drafts;
// begin() starts a fresh request.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <vector>

#include "token_strings.h"
#include "speculative/sam_drafter.h"
#include "util/error.h"

using namespace specd;

namespace {

using specd::test::Tokens;
using specd::test::copy_heavy_tokens;
using specd::test::random_tokens;
constexpr int32_t kFallbackToken = 999999;

// Records what it is told and drafts one recognisable Model node.
class RecordingDrafter : public Drafter {
 public:
  std::string name() const override { return "recording"; }
  void begin(const std::vector<int32_t>& prompt, uint64_t request_seed) override {
    ++begins;
    text = prompt;
    seed = request_seed;
  }
  DraftTree propose(const DraftRequest& request) override {
    ++proposals;
    DraftTree tree(request.root_token);
    if (std::min(request.max_nodes, request.max_depth) > 0) tree.add(0, kFallbackToken, DraftSource::Model, 0.5f);
    return tree;
  }
  void observe(const StepFeedback& feedback) override {
    ++observes;
    text.insert(text.end(), feedback.committed_now.begin(), feedback.committed_now.end());
  }
  int begins = 0, proposals = 0, observes = 0;
  uint64_t seed = 0;
  Tokens text;  // what it was told was committed
};


struct BruteDraft {
  int match_length = 0;
  Tokens tokens;  // the automaton's draft when the match is long enough
};

// Longest suffix of committed + root occurring in committed; then SAM-Decoding's to_anc in terms
// of occurrence sets (a suffix of length k-1 shares k's automaton state iff it occurs at the same
// end positions; the state's link is the root iff its shortest string has length 1), and the
// tokens after the earliest occurrence, n_predicts counting the root.
BruteDraft brute_sam(const Tokens& committed, int32_t root, int n_predicts) {
  const int n = static_cast<int>(committed.size());
  std::vector<int> common(n);  // common[j-1]: common suffix of committed[0, j) and committed + root
  for (int j = 1; j <= n; ++j) {
    int k = 0;
    while (k < j && (k == 0 ? committed[j - 1] == root : committed[j - 1 - k] == committed[n - k])) ++k;
    common[j - 1] = k;
  }
  BruteDraft result;
  result.match_length = n ? *std::max_element(common.begin(), common.end()) : 0;
  if (result.match_length == 0) return result;
  auto occurrences = [&](int k) { return std::count_if(common.begin(), common.end(), [k](int c) { return c >= k; }); };
  auto first_end = [&](int k) { return 1 + static_cast<int>(std::find_if(common.begin(), common.end(), [k](int c) { return c >= k; }) - common.begin()); };
  int k = result.match_length;
  for (;;) {
    int shortest = k;
    while (shortest > 1 && occurrences(shortest - 1) == occurrences(k)) --shortest;
    if (shortest > 1 && n_predicts > n - first_end(k))
      k = shortest - 1;
    else
      break;
  }
  const int e = first_end(k);
  result.tokens.assign(committed.begin() + e, committed.begin() + std::min(n, e + n_predicts - 1));
  return result;
}

void simulate(const Tokens& text, int prompt, const SamOptions& options, std::mt19937& rng, bool with_fallback) {
  RecordingDrafter fallback, twin_fallback;
  SamDrafter drafter(options, with_fallback ? &fallback : nullptr);
  // The same requests proposed in rounds: a fallback that drafts at once gives ready rounds.
  SamDrafter twin(options, with_fallback ? &twin_fallback : nullptr);
  drafter.begin(Tokens(text.begin(), text.begin() + prompt), 0);
  twin.begin(Tokens(text.begin(), text.begin() + prompt), 0);
  Tokens committed(text.begin(), text.begin() + prompt);
  size_t pos = prompt;
  int steps = 0, sam_steps = 0;
  while (pos < text.size()) {
    const int32_t root = text[pos];
    const int max_nodes = 1 + static_cast<int>(rng() % 50);
    const int max_depth = rng() % 4 == 0 ? 1 + static_cast<int>(rng() % 6) : 64;
    const int budget = std::min(max_nodes, max_depth);
    const int proposals_before = fallback.proposals;
    const DraftTree tree = drafter.propose(DraftRequest{committed, root, max_nodes, max_depth});
    tree.check();
    std::unique_ptr<DraftRounds> rounds = twin.propose_in_rounds(DraftRequest{committed, root, max_nodes, max_depth});
    REQUIRE(rounds);
    REQUIRE(rounds->next() == nullptr);
    const DraftTree twin_tree = rounds->tree();
    REQUIRE(twin_tree.tokens == tree.tokens);
    REQUIRE(twin_tree.parents == tree.parents);
    REQUIRE(twin.proposal_class() == drafter.proposal_class());

    const BruteDraft expected = brute_sam(committed, root, std::min(options.n_predicts, budget + 1));
    INFO("committed " << committed.size() << " root " << root << " match " << expected.match_length);
    REQUIRE(drafter.last_match_length() == expected.match_length);
    REQUIRE(tree.tokens[0] == root);
    REQUIRE(tree.size() - 1 <= budget);
    const bool short_match = expected.match_length < options.len_threshold;
    REQUIRE(drafter.last_used_fallback() == short_match);
    REQUIRE(fallback.proposals == proposals_before + (short_match && with_fallback ? 1 : 0));
    if (short_match) {
      REQUIRE(tree.size() == (with_fallback ? 2 : 1));
      if (with_fallback) REQUIRE(tree.tokens[1] == kFallbackToken);
    } else {
      ++sam_steps;
      Tokens drafted;
      for (int32_t i = 1; i < tree.size(); ++i) {
        REQUIRE(tree.parents[i] == i - 1);
        REQUIRE(tree.sources[i] == DraftSource::Retrieval);
        REQUIRE(tree.q[i] == 1.0f);
        drafted.push_back(tree.tokens[i]);
      }
      REQUIRE(static_cast<int>(drafted.size()) <= options.n_predicts - 1);
      REQUIRE(drafted == expected.tokens);
    }

    const size_t accepted = std::min(text.size() - pos, size_t{1} + rng() % 6);
    const Tokens now(text.begin() + pos, text.begin() + pos + accepted);
    committed.insert(committed.end(), now.begin(), now.end());
    const AcceptResult result;
    drafter.observe(StepFeedback{tree, result, now, TargetOutputs{}});
    twin.observe(StepFeedback{tree, result, now, TargetOutputs{}});
    pos += accepted;
    ++steps;
  }
  REQUIRE(drafter.automaton().text() == committed);
  if (with_fallback) {
    REQUIRE(fallback.begins == 1);
    REQUIRE(fallback.observes == steps);
    REQUIRE(fallback.text == committed);
  }
  if (prompt > 0 && options.len_threshold <= 3) REQUIRE(sam_steps > 0);  // the oracle was exercised
}

}  // namespace

TEST_CASE("SAM drafter drafts from the automaton exactly when the match is long enough", "[spec][sam]") {
  std::mt19937 rng(31);
  for (int threshold : {1, 2, 3, 5, 8}) {
    for (int n_predicts : {2, 6, 40}) {
      SamOptions options;
      options.len_threshold = threshold;
      options.n_predicts = n_predicts;
      INFO("threshold " << threshold << " n_predicts " << n_predicts);
      for (bool with_fallback : {true, false}) {
        simulate(copy_heavy_tokens(rng, 300, 150000), 80, options, rng, with_fallback);
        simulate(copy_heavy_tokens(rng, 300, 5), 80, options, rng, with_fallback);
        simulate(random_tokens(rng, 200, 3), 20, options, rng, with_fallback);
      }
    }
  }
}

TEST_CASE("SAM drafter defaults and budgets", "[spec][sam]") {
  const SamOptions defaults;
  REQUIRE(defaults.n_predicts == 40);
  REQUIRE(defaults.len_threshold == 5);

  RecordingDrafter fallback;
  SamDrafter drafter(defaults, &fallback);
  REQUIRE(drafter.name() == "sam");
  Tokens prompt;
  for (int i = 0; i < 100; ++i) prompt.push_back(100 + i);
  for (int i = 0; i < 10; ++i) prompt.push_back(100 + i);  // repeats the first 10 tokens
  drafter.begin(prompt, 0);
  REQUIRE(fallback.begins == 1);

  // Match "100..110" (11 tokens with the root): draft the 39 tokens that followed.
  DraftTree tree = drafter.propose(DraftRequest{prompt, 110, 200, 200});
  REQUIRE(drafter.last_match_length() == 11);
  REQUIRE_FALSE(drafter.last_used_fallback());
  REQUIRE(tree.size() == 40);
  REQUIRE(tree.tokens[1] == 111);
  REQUIRE(tree.tokens[39] == 149);
  tree = drafter.propose(DraftRequest{prompt, 110, 7, 200});
  REQUIRE(tree.size() == 8);
  tree = drafter.propose(DraftRequest{prompt, 110, 200, 3});
  REQUIRE(tree.size() == 4);
  REQUIRE(tree.depths.back() == 3);
  tree = drafter.propose(DraftRequest{prompt, 110, 0, 3});  // no budget: root alone, no fallback
  REQUIRE(tree.size() == 1);
  REQUIRE(fallback.proposals == 0);

  // A short match goes to the fallback.
  tree = drafter.propose(DraftRequest{prompt, 150, 200, 200});
  REQUIRE(drafter.last_match_length() == 1);
  REQUIRE(drafter.last_used_fallback());
  REQUIRE(fallback.proposals == 1);
  REQUIRE(tree.sources[1] == DraftSource::Model);
}

TEST_CASE("SAM drafter begin() starts a fresh request", "[spec][sam]") {
  RecordingDrafter fallback;
  SamDrafter drafter(SamOptions{}, &fallback);
  const Tokens first{1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4};
  drafter.begin(first, 0);
  REQUIRE(drafter.propose(DraftRequest{first, 5, 40, 40}).size() > 1);  // "1 2 3 4 5" occurred
  const Tokens second{50, 51, 2, 3, 4};
  drafter.begin(second, 77);
  REQUIRE(fallback.begins == 2);
  REQUIRE(fallback.text == second);
  REQUIRE(fallback.seed == 77);  // a sampling fallback draws from the request's seed
  REQUIRE(drafter.automaton().text() == second);
  drafter.propose(DraftRequest{second, 5, 40, 40});
  REQUIRE(drafter.last_match_length() == 0);  // nothing of the first request is left
  REQUIRE(drafter.last_used_fallback());
}

TEST_CASE("SAM drafter catches up from the request when observe is not called", "[spec][sam]") {
  SamDrafter drafter;
  Tokens committed{1, 2, 3, 4, 5, 6, 7};
  drafter.begin(committed, 0);
  for (int32_t t : {9, 1, 2, 3, 4}) committed.push_back(t);
  const DraftTree tree = drafter.propose(DraftRequest{committed, 5, 40, 40});
  REQUIRE(drafter.automaton().text() == committed);
  REQUIRE(drafter.last_match_length() == 5);
  REQUIRE(tree.size() == 1 + 7);  // 6 7 9 1 2 3 4
  // A different text of the same length is rebuilt from the request, not patched.
  Tokens other(committed.size(), 42);
  drafter.propose(DraftRequest{other, 42, 40, 40});
  REQUIRE(drafter.automaton().text() == other);
  REQUIRE(drafter.last_match_length() == static_cast<int32_t>(other.size()));
}

TEST_CASE("SAM drafter rejects inconsistent options", "[spec][sam]") {
  SamOptions o;
  o.n_predicts = 1;
  REQUIRE_THROWS_AS(SamDrafter(o), InputError);
  o = SamOptions{};
  o.len_threshold = 0;
  REQUIRE_THROWS_AS(SamDrafter(o), InputError);
}
