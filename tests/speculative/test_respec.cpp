// ReSpec's parts without a model: the key choice on synthetic entropies (k* and H_min by hand),
// the match index against a brute-force scan, the EMA scores against a hand-computed sequence
// (alone and through the drafter's winner rule), the candidate selection, the trigger decisions,
// and relaxed verification with look-ahead on synthetic logits (tau, beta, phi, m, failure, and
// tau = 0 / phi = 0 equal to greedy verification).
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <map>
#include <random>

#include <nlohmann/json.hpp>

#include "speculative/greedy_acceptor.h"
#include "speculative/respec_acceptor.h"
#include "speculative/respec_drafter.h"
#include "speculative/respec_retrieval.h"
#include "speculative/sampling_acceptor.h"

using namespace specd;

namespace {

constexpr int32_t kFallbackToken = 77;

class OneNodeDrafter : public Drafter {
 public:
  std::string name() const override { return "one-node"; }
  void begin(const std::vector<int32_t>& prompt, uint64_t) override { ++begins; }
  DraftTree propose(const DraftRequest& request) override {
    DraftTree tree(request.root_token);
    tree.add(0, kFallbackToken, DraftSource::Model, 0.5f);
    return tree;
  }
  void observe(const StepFeedback&) override { ++observes; }
  int begins = 0, observes = 0;
};

// Gives the drafter a prompt whose last prefill rows have the given entropies.
void start(RespecDrafter& drafter, const std::vector<int32_t>& prompt, const std::vector<float>& last_entropies) {
  drafter.begin(prompt, 0);
  TargetOutputs prefill;
  prefill.entropies = last_entropies;
  drafter.observe_prefill(prefill);
}

// Logits rows over a vocabulary of 8: -10 everywhere except the given tokens.
std::vector<float> row(const std::map<int32_t, float>& set) {
  std::vector<float> r(8, -10.0f);
  for (const auto& [token, logit] : set) r[token] = logit;
  return r;
}

LookaheadResult run(const std::vector<int32_t>& tokens, const std::vector<std::vector<float>>& rows, RelaxedRule rule) {
  return relaxed_lookahead(tokens, [&](int32_t i) { return rows.at(i).data(); }, 8, rule);
}

}  // namespace

TEST_CASE("respec key choice: k* = argmin H_k + lambda_e/k by hand, ties to the smaller k", "[respec]") {
  // H_1 = 3, C_1 = 3.5; H_2 = 2, C_2 = 2.25; H_3 = 1.4, C_3 = 1.4 + 0.5/3.
  KeyChoice a = choose_key({0.2, 1.0, 3.0}, 3, 0.5);
  CHECK(a.k == 3);
  CHECK(a.h_min == Approx(1.4).epsilon(1e-12));
  // H_1 = 0.2 (C 0.5), H_2 = 0.15 (C 0.3), H_3 = 5.3/3 (C 1.87).
  KeyChoice b = choose_key({5.0, 0.1, 0.2}, 3, 0.3);
  CHECK(b.k == 2);
  CHECK(b.h_min == Approx(0.15).epsilon(1e-12));
  CHECK(choose_key({1.0, 1.0}, 3, 0.0).k == 1);  // C_1 == C_2: the smaller k
  CHECK(choose_key({0.5}, 3, 1.0).k == 1);        // only one entropy known: k = 2, 3 skipped
  CHECK(choose_key({}, 3, 1.0).k == 0);
  CHECK(choose_key({0.1, 0.1, 0.1}, 2, 0.3).k == 2);  // max_key bounds k
  // Only the allowed lengths compete (index k): without k = 3, b's k = 2 stays; a's goes to k = 2.
  const std::vector<bool> no_three{false, true, true, false};
  CHECK(choose_key({0.2, 1.0, 3.0}, 3, 0.5, &no_three).k == 2);
  CHECK(choose_key({0.2, 1.0, 3.0}, 3, 0.5, &no_three).h_min == Approx(2.0).epsilon(1e-12));
  const std::vector<bool> only_one{false, true};  // shorter than max_key + 1: the rest not allowed
  CHECK(choose_key({5.0, 0.1, 0.2}, 3, 0.3, &only_one).k == 1);
  const std::vector<bool> none(4, false);
  CHECK(choose_key({5.0, 0.1, 0.2}, 3, 0.3, &none).k == 0);
}

TEST_CASE("respec match index returns every earlier end position, as a brute-force scan", "[respec]") {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 50; ++trial) {
    NgramPositions index(3);
    std::vector<int32_t> text;
    const int length = 1 + static_cast<int>(rng() % 120);
    for (int i = 0; i < length; ++i) {
      text.push_back(static_cast<int32_t>(rng() % 4));
      index.append(text.back());
    }
    for (int32_t n = 1; n <= 3; ++n)
      for (int q = 0; q < 10; ++q) {
        std::vector<int32_t> key;
        for (int32_t i = 0; i < n; ++i) key.push_back(static_cast<int32_t>(rng() % 4));
        std::vector<int32_t> brute;
        for (int32_t end = n - 1; end < length; ++end)
          if (std::equal(key.begin(), key.end(), text.begin() + end - n + 1)) brute.push_back(end);
        CHECK(index.matches(key.data(), n) == brute);
      }
  }
}

TEST_CASE("respec EMA scores follow S <- (1 - alpha) S + alpha R from S0, exactly", "[respec]") {
  EmaScores s(0.3, 0.5);
  CHECK(s.score(4) == 0.5);
  CHECK(s.size() == 0);
  CHECK(s.update(4, 1.0) == Approx(0.65).epsilon(1e-15));   // 0.7 * 0.5 + 0.3
  CHECK(s.update(4, 0.0) == Approx(0.455).epsilon(1e-15));  // 0.7 * 0.65
  CHECK(s.update(4, 0.5) == Approx(0.4685).epsilon(1e-15)); // 0.7 * 0.455 + 0.15
  CHECK(s.update(9, 0.0) == Approx(0.35).epsilon(1e-15));
  CHECK(s.score(4) == Approx(0.4685).epsilon(1e-15));
  CHECK(s.size() == 2);
}

TEST_CASE("respec candidate selection: filter by theta_score, best scores first, ties to the later position", "[respec]") {
  EmaScores s(0.5, 0.5);
  s.update(3, 0.0);  // 0.25
  s.update(8, 1.0);  // 0.75
  const std::vector<int32_t> positions{1, 3, 5, 8, 12};
  CHECK(select_candidates(positions, s, 0.3, 3, true) == std::vector<int32_t>{8, 12, 5});
  CHECK(select_candidates(positions, s, 0.3, 10, true) == std::vector<int32_t>{8, 12, 5, 1});
  CHECK(select_candidates(positions, s, 0.8, 3, true).empty());
  CHECK(select_candidates(positions, s, 0.8, 3, false) == std::vector<int32_t>{12, 8, 5});  // no EMA: latest first
}

TEST_CASE("respec drafter: all match positions drafted as a trie, then the EMA learns the winner's R", "[respec]") {
  RespecOptions options;
  options.draft_length = 4;
  OneNodeDrafter fallback;
  RespecDrafter drafter(options, &fallback);
  //                                  0  1  2  3  4  5  6  7  8  9 10 11 12 13 14
  const std::vector<int32_t> prompt{1, 2, 3, 9, 1, 2, 3, 8, 1, 2, 3, 7, 5, 1, 2};
  start(drafter, prompt, {0.25f, 0.25f, 0.25f});
  CHECK(fallback.begins == 1);
  const DraftRequest request{prompt, 3, 100, 100};
  const DraftTree tree = drafter.propose(request);
  // H_1 = H_2 = H_3 = 0.25; C_k = 0.25 + 0.3/k: k* = 3, the key {1, 2, 3} ends at 2, 6 and 10.
  CHECK(drafter.last_key().k == 3);
  CHECK(drafter.last_trigger() == "retrieve");
  CHECK(drafter.proposal_class() == 4);
  CHECK(drafter.last_selected() == std::vector<int32_t>{10, 6, 2});  // all at S0: the later first
  // Chains 7 5 1 2 | 8 1 2 3 | 9 1 2 3, no shared prefix: 12 nodes.
  REQUIRE(tree.size() == 13);
  CHECK(std::vector<int32_t>(tree.tokens.begin() + 1, tree.tokens.begin() + 5) == std::vector<int32_t>{7, 5, 1, 2});
  CHECK(std::vector<int32_t>(tree.tokens.begin() + 5, tree.tokens.begin() + 9) == std::vector<int32_t>{8, 1, 2, 3});
  for (int32_t i = 1; i < tree.size(); ++i) CHECK(tree.sources[i] == DraftSource::Retrieval);

  // The target accepts 8, 1 from the second chain (nodes 5, 6): R = 2/4 for position 6, 0 for 10 and 2.
  AcceptResult result;
  result.path = {0, 5, 6};
  result.next_token = 4;
  const std::vector<int32_t> now{3, 8, 1};
  TargetOutputs target;
  target.entropies = {0.5f, 0.5f, 0.5f};
  drafter.observe(StepFeedback{tree, result, now, target});
  CHECK(fallback.observes == 1);
  CHECK(drafter.scores().score(6) == Approx(0.7 * 0.5 + 0.3 * 0.5).epsilon(1e-15));
  CHECK(drafter.scores().score(10) == Approx(0.35).epsilon(1e-15));
  CHECK(drafter.scores().score(2) == Approx(0.35).epsilon(1e-15));
  CHECK(drafter.scores().size() == 3);
  const DraftingDetail detail = drafter.step_detail();
  CHECK(*drafting_value(detail, "trigger") == DetailValue("retrieve"));
  CHECK(*drafting_value(detail, "matches") == DetailValue(3));
  CHECK(*drafting_value(detail, "ema_size") == DetailValue(3));
  CHECK(*drafting_value(detail, "winner_r") == DetailValue(0.5));

  // Next step: text ... 3 8 1 + root 2; entropies 0.5 (3 of them): k* = 3, key {8, 1, 2} ends at 9.
  std::vector<int32_t> committed = prompt;
  committed.insert(committed.end(), now.begin(), now.end());
  const DraftTree next = drafter.propose(DraftRequest{committed, 2, 100, 100});
  CHECK(drafter.last_key().k == 3);
  CHECK(drafter.last_selected() == std::vector<int32_t>{9});
  CHECK(next.tokens[1] == 3);  // 8 1 2 | 3 7 5 1
  // Nothing accepted: the sole candidate is the winner with R = 0.
  AcceptResult none;
  none.path = {0};
  drafter.observe(StepFeedback{next, none, std::vector<int32_t>{2}, target});
  CHECK(drafter.scores().score(9) == Approx(0.35).epsilon(1e-15));
}

TEST_CASE("respec drafter decisions: entropy, no-key, low-score fall back, no-trigger retrieves anyway", "[respec]") {
  const std::vector<int32_t> prompt{1, 2, 3, 9, 1, 2};
  SECTION("high entropy: the fallback drafts") {
    OneNodeDrafter fallback;
    RespecDrafter drafter(RespecOptions{}, &fallback);
    start(drafter, prompt, {4.0f, 4.0f, 4.0f});
    const DraftTree tree = drafter.propose(DraftRequest{prompt, 3, 100, 100});
    CHECK(drafter.last_trigger() == "entropy");
    CHECK(drafter.proposal_class() == 0);
    REQUIRE(tree.size() == 2);
    CHECK(tree.tokens[1] == kFallbackToken);
  }
  SECTION("no trigger: the same entropies retrieve") {
    RespecOptions options;
    options.use_trigger = false;
    RespecDrafter drafter(options);
    start(drafter, prompt, {4.0f, 4.0f, 4.0f});
    const DraftTree tree = drafter.propose(DraftRequest{prompt, 3, 100, 100});
    CHECK(drafter.last_trigger() == "retrieve");
    CHECK(tree.tokens[1] == 9);
  }
  SECTION("the key chosen by the entropies: only the last one is low") {
    RespecDrafter drafter(RespecOptions{});
    start(drafter, prompt, {4.0f, 4.0f, 0.25f});
    drafter.propose(DraftRequest{prompt, 3, 100, 100});
    CHECK(drafter.last_key().k == 1);  // C_1 = 0.55, C_2 = 2.275, C_3 = 2.85
    CHECK(drafter.last_key().h_min == 0.25);
    CHECK(drafter.last_selected() == std::vector<int32_t>{2});  // "3" ends at 2 only
  }
  SECTION("an unseen key, and a filter above S0; without a draft model the root alone") {
    RespecOptions options;
    RespecDrafter drafter(options);
    start(drafter, prompt, {0.25f, 0.25f, 0.25f});
    CHECK(drafter.propose(DraftRequest{prompt, 42, 100, 100}).size() == 1);
    CHECK(drafter.last_trigger() == "no-key");
    options.theta_score = 0.6;
    RespecDrafter strict(options);
    start(strict, prompt, {0.25f, 0.25f, 0.25f});
    CHECK(strict.propose(DraftRequest{prompt, 3, 100, 100}).size() == 1);
    CHECK(strict.last_trigger() == "low-score");
  }
  SECTION("key among existing: k* over the key lengths that occurred") {
    // Root 9: "9" ends at 3; "2 9" and "1 2 9" never occurred. Equal entropies favour k = 3.
    RespecDrafter paper(RespecOptions{});
    start(paper, prompt, {0.25f, 0.25f, 0.25f});
    CHECK(paper.propose(DraftRequest{prompt, 9, 100, 100}).size() == 1);
    CHECK(paper.last_key().k == 3);
    CHECK(paper.last_trigger() == "no-key");
    RespecOptions options;
    options.key_among_existing = true;
    RespecDrafter existing(options);
    start(existing, prompt, {0.25f, 0.25f, 0.25f});
    const DraftTree tree = existing.propose(DraftRequest{prompt, 9, 100, 100});
    CHECK(existing.last_key().k == 1);
    CHECK(existing.last_trigger() == "retrieve");
    CHECK(existing.last_selected() == std::vector<int32_t>{3});
    REQUIRE(tree.size() >= 2);
    CHECK(tree.tokens[1] == 1);  // the token after position 3
    // No length occurred at all: the paper's k*, and no key.
    CHECK(existing.propose(DraftRequest{prompt, 42, 100, 100}).size() == 1);
    CHECK(existing.last_key().k == 3);
    CHECK(existing.last_trigger() == "no-key");
  }
  SECTION("the node budget caps the trie; a shorter prompt skips unknown entropies") {
    RespecDrafter drafter(RespecOptions{});
    start(drafter, prompt, {0.25f});  // one prompt row: only k = 1
    const DraftTree tree = drafter.propose(DraftRequest{prompt, 3, 2, 100});
    CHECK(drafter.last_key().k == 1);
    CHECK(tree.size() == 3);
  }
}

TEST_CASE("respec relaxed look-ahead on synthetic logits: tau, beta, phi, m and failures", "[respec]") {
  // Greedy rows: token t is the argmax. Relaxed rows: 5 is the argmax, t second with a gap of 1.
  auto g = [](int32_t t) { return row({{t, 5.0f}}); };
  auto r = [](int32_t t, float gap = 1.0f) { return row({{5, 5.0f}, {t, 5.0f - gap}}); };
  RelaxedRule rule{1.5, 1, 2, 5};
  // chain 1 2 3 4: 1 greedy, 2 relaxed, 3 4 greedy.
  const std::vector<int32_t> chain{1, 2, 3, 4};
  const std::vector<std::vector<float>> rows{g(1), r(2), g(3), g(4)};
  SECTION("tau") {
    LookaheadResult a = run(chain, rows, rule);
    CHECK(a.greedy_prefix == 1);
    CHECK(a.accepted == 4);
    CHECK(a.relaxed == std::vector<char>{0, 1, 0, 0});
    CHECK(a.gaps == std::vector<double>{1.0});
    rule.tau = 0.5;
    LookaheadResult b = run(chain, rows, rule);
    CHECK(b.accepted == 1);
    CHECK(b.tries == 1);
  }
  SECTION("beta: the token must be in the top-beta") {
    std::vector<std::vector<float>> ranked = rows;
    ranked[1] = row({{5, 5.0f}, {6, 4.5f}, {2, 4.0f}});  // 2 is third
    rule.beta = 2;
    CHECK(run(chain, ranked, rule).accepted == 1);
    rule.beta = 3;
    CHECK(run(chain, ranked, rule).accepted == 4);
  }
  SECTION("m: too few greedy matches after the relaxed token accept nothing past l0") {
    rule.min_matches = 3;
    rule.phi = 3;
    LookaheadResult a = run(chain, rows, rule);
    CHECK(a.accepted == 1);
    CHECK(a.tries == 3);  // at 1 (passes, 2 matches), at 2 (passes, 1), at 3 (passes, 0)
    rule.min_matches = 0;
    rule.phi = 1;
    const std::vector<int32_t> tail{1, 2};
    CHECK(run(tail, {g(1), r(2)}, rule).accepted == 2);  // m = 0: the relaxed token alone counts
  }
  SECTION("phi bounds the relaxed tries; a relaxed failure ends the procedure") {
    const std::vector<int32_t> two{2, 3, 4, 2, 3, 4};
    const std::vector<std::vector<float>> two_rows{r(2), g(3), g(4), r(2), g(3), g(4)};
    CHECK(run(two, two_rows, rule).accepted == 3);
    rule.phi = 2;
    CHECK(run(two, two_rows, rule).accepted == 6);
    rule.phi = 5;
    std::vector<std::vector<float>> failing = two_rows;
    failing[0] = r(2, 4.0f);  // gap 4 > tau
    LookaheadResult f = run(two, failing, rule);
    CHECK(f.accepted == 0);
    CHECK(f.tries == 1);
  }
  SECTION("a passed try without enough matches advances current; a later try may still count") {
    // a(relaxed) b(greedy) c(relaxed) d e(greedy), m = 2.
    const std::vector<int32_t> c5{2, 3, 2, 4, 6};
    const std::vector<std::vector<float>> c5_rows{r(2), g(3), r(2), g(4), g(6)};
    rule.phi = 2;
    CHECK(run(c5, c5_rows, rule).accepted == 0);  // tries at 0 and 1 pass without 2 matches
    rule.phi = 3;
    LookaheadResult a = run(c5, c5_rows, rule);
    CHECK(a.accepted == 5);
    CHECK(a.relaxed == std::vector<char>{1, 0, 1, 0, 0});
  }
  SECTION("phi = 0 and tau = 0 are greedy") {
    rule.phi = 0;
    CHECK(run(chain, rows, rule).accepted == 1);
    rule.phi = 3;
    rule.tau = 0;
    CHECK(run(chain, rows, rule).accepted == 1);
  }
}

TEST_CASE("respec acceptor with tau = 0 equals greedy verification on random retrieval tries", "[respec]") {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> logit(-3.0f, 3.0f);
  constexpr int64_t vocab = 6;
  RespecOptions options;
  options.tau = 0;
  options.phi = 3;
  options.min_matches = 0;
  options.beta = 6;
  RespecAcceptor acceptor(options);
  Sampler sampler(SamplingParams{});
  for (int trial = 0; trial < 200; ++trial) {
    DraftTree tree(static_cast<int32_t>(rng() % vocab));
    for (int chain = 0; chain < 3; ++chain) {  // a trie of three random chains
      int32_t parent = 0;
      for (int d = 0; d < 5; ++d) {
        const int32_t token = static_cast<int32_t>(rng() % 3);
        int32_t child = -1;
        for (int32_t c : tree.children(parent))
          if (tree.tokens[c] == token) child = c;
        parent = child >= 0 ? child : tree.add(parent, token, DraftSource::Retrieval);
      }
    }
    std::vector<float> logits(static_cast<size_t>(tree.size()) * vocab);
    for (float& z : logits) z = logit(rng);
    // Make the drafts often right: a node's argmax is often its first child's token.
    for (int32_t i = 0; i < tree.size(); ++i) {
      const std::vector<int32_t> kids = tree.children(i);
      if (!kids.empty() && rng() % 3) logits[i * vocab + tree.tokens[kids[0]]] = 4.0f;
    }
    const AcceptResult a = acceptor.accept(tree, logits.data(), vocab, sampler);
    const AcceptResult b = GreedyAcceptor().accept(tree, logits.data(), vocab);
    CHECK(a.path == b.path);
    CHECK(a.next_token == b.next_token);
    CHECK(a.count(NodeVerdict::Relaxed) == 0);
    CHECK_FALSE(a.lossless);
  }
}

TEST_CASE("respec acceptor relaxes retrieved nodes only, model trees are verified losslessly", "[respec]") {
  constexpr int64_t vocab = 8;
  RespecOptions options;
  options.tau = 1.5;
  options.phi = 1;
  options.min_matches = 1;
  RespecAcceptor acceptor(options);
  Sampler sampler(SamplingParams{});
  for (DraftSource source : {DraftSource::Retrieval, DraftSource::Model}) {
    DraftTree tree(0);
    tree.add(0, 2, source);
    tree.add(1, 3, source);
    std::vector<float> logits;
    for (const auto& r : {row({{5, 5.0f}, {2, 4.0f}}), row({{3, 5.0f}}), row({{6, 5.0f}})}) logits.insert(logits.end(), r.begin(), r.end());
    const AcceptResult a = acceptor.accept(tree, logits.data(), vocab, sampler);
    CAPTURE(draft_source_name(source));
    if (source == DraftSource::Retrieval) {
      CHECK(a.path == std::vector<int32_t>{0, 1, 2});
      CHECK(a.verdicts[1] == NodeVerdict::Relaxed);
      CHECK(a.scores[1] == 1.0f);
      CHECK(a.next_token == 6);
      CHECK_FALSE(a.lossless);
      const auto& detail = std::get<RespecAcceptance>(a.detail);
      CHECK(detail.gaps.size() == 1);
      CHECK(detail.tries == 1);
    } else {
      CHECK(a.path == std::vector<int32_t>{0});
      CHECK(a.next_token == 5);
      CHECK(a.lossless);
    }
  }
}

namespace {

// A fallback that drafts in one round the caller runs (as the draft-model trees do), so that a
// server can batch it: one forward asked for, then its node.
class OneRoundDrafter : public OneNodeDrafter {
 public:
  class Rounds : public DraftRounds {
   public:
    explicit Rounds(int32_t root) : root_(root) { forward_.tokens = {root}; }
    DraftShape shape() const override { return DraftShape{1, 1}; }
    const ForwardRequest* next() override { return fed ? nullptr : &forward_; }
    const LlamaModel& model() const override { throw std::logic_error("not in this test"); }
    KvCache& cache() override { throw std::logic_error("not in this test"); }
    void feed(ForwardResult) override { fed = true; }
    DraftTree tree() override {
      DraftTree tree(root_);
      if (fed) tree.add(0, kFallbackToken, DraftSource::Model, 0.5f);
      return tree;
    }
    bool fed = false;

   private:
    int32_t root_;
    ForwardRequest forward_;
  };
  std::unique_ptr<DraftRounds> propose_in_rounds(const DraftRequest& request) override {
    return std::make_unique<Rounds>(request.root_token);
  }
};

}  // namespace

TEST_CASE("respec hands the caller its fallback's rounds, and a retrieved draft as rounds with no forward", "[respec]") {
  const std::vector<int32_t> prompt{1, 2, 3, 9, 1, 2};
  OneRoundDrafter fallback;
  RespecDrafter drafter(RespecOptions{}, &fallback);
  start(drafter, prompt, {4.0f, 4.0f, 4.0f});  // high entropy: the fallback drafts
  std::unique_ptr<DraftRounds> rounds = drafter.propose_in_rounds(DraftRequest{prompt, 3, 100, 100});
  REQUIRE(rounds);
  CHECK(drafter.last_trigger() == "entropy");
  REQUIRE(rounds->next() != nullptr);
  rounds->feed(ForwardResult{});
  CHECK(rounds->next() == nullptr);
  DraftTree tree = rounds->tree();
  REQUIRE(tree.size() == 2);
  CHECK(tree.tokens[1] == kFallbackToken);

  RespecDrafter retrieving(RespecOptions{}, &fallback);
  start(retrieving, prompt, {0.25f, 0.25f, 0.25f});
  RespecDrafter alone(RespecOptions{}, &fallback);
  start(alone, prompt, {0.25f, 0.25f, 0.25f});
  rounds = retrieving.propose_in_rounds(DraftRequest{prompt, 3, 100, 100});
  CHECK(retrieving.last_trigger() == "retrieve");
  REQUIRE(rounds);
  CHECK(rounds->next() == nullptr);
  const DraftTree expected = alone.propose(DraftRequest{prompt, 3, 100, 100});
  // A retrieved draft's shape, what a batched step plans for, is the tree's own.
  CHECK(rounds->shape().nodes == expected.size() - 1);
  CHECK(rounds->shape().depth == expected.depth());
  tree = rounds->tree();
  CHECK(tree.tokens == expected.tokens);
  CHECK(tree.parents == expected.parents);
}
