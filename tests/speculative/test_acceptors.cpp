// Acceptors. Greedy: the longest matching path, ties to the first, the next token from the last
// accepted node. Sampling: the oracle that speculative steps reproduce the target's distribution
// (a chi-square test on synthetic bigram "models" over a 6-token vocabulary, fixed seeds), for
// sampled chains, i.i.d. sampled siblings, retrieved (deterministic) siblings, mixed siblings and
// top-k/top-p-shaped targets; plus a negative control showing the test catches a wrong residual.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <random>
#include <sstream>
#include <stdexcept>

#include "sampling/sampler.h"
#include "speculative/greedy_acceptor.h"
#include "speculative/sampling_acceptor.h"

using namespace specd;

namespace {

constexpr int64_t kVocab = 6;

SamplingParams params(double temperature, int top_k = 0, double top_p = 1.0, uint64_t seed = 0) {
  SamplingParams p;
  p.temperature = temperature;
  p.top_k = top_k;
  p.top_p = top_p;
  p.seed = seed;
  return p;
}

// ---------------------------------------------------------------------------------------------
// Greedy helpers: logits rows whose argmax is a chosen token.

std::vector<float> argmax_rows(const std::vector<int32_t>& argmax_per_node) {
  std::vector<float> logits(argmax_per_node.size() * kVocab, 0.0f);
  for (size_t i = 0; i < argmax_per_node.size(); ++i) {
    for (int64_t v = 0; v < kVocab; ++v) logits[i * kVocab + v] = 0.1f * static_cast<float>(v % 3);
    logits[i * kVocab + argmax_per_node[i]] = 5.0f;
  }
  return logits;
}

// ---------------------------------------------------------------------------------------------
// Sampling oracle helpers.

// Two toy bigram models: the next-token distribution depends on the previous token only. The
// drafter differs clearly from the target so that rejections and residuals matter.
struct ToyModels {
  std::vector<std::vector<float>> target;                   // target logits given the previous token
  std::vector<std::shared_ptr<const std::vector<float>>> draft;  // drafter q given the previous token
};

ToyModels make_models() {
  ToyModels m;
  std::mt19937_64 rng(20240601);
  std::normal_distribution<double> normal(0.0, 1.0);
  for (int64_t prev = 0; prev < kVocab; ++prev) {
    std::vector<float> logits(kVocab);
    for (auto& l : logits) l = static_cast<float>(normal(rng));
    m.target.push_back(logits);
    std::vector<float> draft_logits(kVocab);
    for (auto& l : draft_logits) l = static_cast<float>(normal(rng));
    auto q = shaped_distribution(draft_logits.data(), kVocab, params(1.0));
    m.draft.push_back(std::make_shared<const std::vector<float>>(q.begin(), q.end()));
  }
  return m;
}

const ToyModels& models() {
  static const ToyModels m = make_models();
  return m;
}

// The target's logits at every node of a tree (row i predicts the token after node i).
std::vector<float> target_rows(const DraftTree& tree) {
  std::vector<float> rows;
  for (int32_t token : tree.tokens) {
    const auto& row = models().target[token];
    rows.insert(rows.end(), row.begin(), row.end());
  }
  return rows;
}

// Adds a child sampled from the drafter's q at `parent` (and records that q row for the parent).
int32_t add_sampled(DraftTree& tree, int32_t parent, std::mt19937_64& rng) {
  const auto& q = models().draft[tree.tokens[parent]];
  tree.child_q[parent] = q;
  const std::vector<double> qd(q->begin(), q->end());
  const int32_t token = draw(qd, std::uniform_real_distribution<double>(0.0, 1.0)(rng));
  return tree.add(parent, token, DraftSource::Model, (*q)[token]);
}

using TreeBuilder = std::function<DraftTree(int32_t root, std::mt19937_64& draft_rng)>;

// Generates at least `count` tokens after `root` by speculative steps (each step's next token is
// the following step's root) and returns the first `count`.
std::vector<int32_t> generate(const TreeBuilder& build, Acceptor& acceptor, Sampler& sampler, std::mt19937_64& draft_rng,
                              int32_t root, size_t count) {
  std::vector<int32_t> out;
  while (out.size() < count) {
    DraftTree tree = build(root, draft_rng);
    auto logits = target_rows(tree);
    AcceptResult result = acceptor.accept(tree, logits.data(), kVocab, sampler);
    for (size_t i = 1; i < result.path.size(); ++i) out.push_back(tree.tokens[result.path[i]]);
    out.push_back(result.next_token);
    root = result.next_token;
  }
  out.resize(count);
  return out;
}

// Upper tail of the chi-square distribution with df degrees of freedom at x: the regularized
// upper incomplete gamma function Q(df/2, x/2), by its power series below a + 1 and by its
// continued fraction (modified Lentz) above.
double chi_square_tail(double x, int df) {
  const double a = 0.5 * df, y = 0.5 * x;
  if (y <= 0) return 1.0;
  const double log_prefix = -y + a * std::log(y) - std::lgamma(a);
  if (y < a + 1) {
    double term = 1.0 / a, sum = term;
    for (int n = 1; n < 10000 && term > sum * 1e-16; ++n) sum += term *= y / (a + n);
    return 1.0 - sum * std::exp(log_prefix);
  }
  const double tiny = 1e-300;
  double b = y + 1 - a, c = 1 / tiny, d = 1 / b, h = d;
  for (int n = 1; n < 10000; ++n) {
    const double an = -n * (n - a);
    b += 2;
    d = an * d + b;
    d = std::abs(d) < tiny ? tiny : d;
    c = b + an / c;
    c = std::abs(c) < tiny ? tiny : c;
    d = 1 / d;
    const double delta = d * c;
    h *= delta;
    if (std::abs(delta - 1) < 1e-16) break;
  }
  return std::exp(log_prefix) * h;
}

// Pearson's chi-square of observed counts against probabilities; df = cells with p > 0, minus 1.
// A count in a cell of probability 0 is reported separately: it is impossible under the target,
// not merely unlikely.
struct ChiSquare {
  double statistic = 0;
  int df = 0;
  double p_value = 1;
  long impossible = 0;
  double min_expected = 1e300;
  std::string describe() const {
    std::ostringstream s;
    s << "chi2 = " << statistic << ", df = " << df << ", p-value = " << p_value
      << ", counts in zero-probability cells = " << impossible << ", min expected count = " << min_expected;
    return s.str();
  }
};

ChiSquare chi_square(const std::vector<long>& observed, const std::vector<double>& p, long trials) {
  ChiSquare c;
  int cells = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] <= 0) {
      c.impossible += observed[i];
      continue;
    }
    const double expected = p[i] * static_cast<double>(trials);
    c.min_expected = std::min(c.min_expected, expected);
    c.statistic += (observed[i] - expected) * (observed[i] - expected) / expected;
    ++cells;
  }
  c.df = cells - 1;
  c.p_value = chi_square_tail(c.statistic, c.df);
  return c;
}

// The oracle's verdict: no impossible token, and no deviation significant at the 0.001 level.
// With fixed seeds the outcome is deterministic; a correct rule would fail one of these checks
// for about 1 seed in 1000.
void require_matches(const ChiSquare& c) {
  INFO(c.describe());
  REQUIRE(c.df >= 1);
  REQUIRE(c.min_expected >= 5.0);  // the chi-square approximation needs it; a test-design guard
  CHECK(c.impossible == 0);
  CHECK(c.p_value > 0.001);
}

// 200,000 speculative steps per case. Power: a rule that moves 0.3 percentage points of mass
// between two tokens of probability ~0.15 adds N * sum(delta^2 / p) = 24 to the expected chi2
// (df 5, critical value 20.5), so it is caught more often than not; the broken rules tried while
// writing the acceptor (no residual, a residual that is not cumulative across siblings, sorted
// siblings visited in index order, point-mass without renormalizing, retrieved tokens put through
// p/q, unshaped distributions below the root) each gave chi2 in the hundreds to hundreds of
// thousands in at least one case here.
constexpr long kTrials = 200000;

// Oracle 1: the first token committed after `root` is distributed as the shaped target at the root.
ChiSquare first_token_test(const TreeBuilder& build, const SamplingParams& sp, int32_t root, uint64_t seed) {
  SamplingAcceptor acceptor;
  Sampler sampler(params(sp.temperature, sp.top_k, sp.top_p, seed));
  std::mt19937_64 draft_rng(seed ^ 0x9e3779b97f4a7c15ULL);
  std::vector<long> counts(kVocab, 0);
  for (long t = 0; t < kTrials; ++t) ++counts[generate(build, acceptor, sampler, draft_rng, root, 1)[0]];
  return chi_square(counts, shaped_distribution(models().target[root].data(), kVocab, sp), kTrials);
}

// Oracle 2: the first two committed tokens are jointly distributed as p(a | root) p(b | a); this
// checks every conditional distribution of the second token at once.
ChiSquare two_token_test(const TreeBuilder& build, const SamplingParams& sp, int32_t root, uint64_t seed) {
  SamplingAcceptor acceptor;
  Sampler sampler(params(sp.temperature, sp.top_k, sp.top_p, seed));
  std::mt19937_64 draft_rng(seed ^ 0x9e3779b97f4a7c15ULL);
  std::vector<long> counts(kVocab * kVocab, 0);
  for (long t = 0; t < kTrials; ++t) {
    auto two = generate(build, acceptor, sampler, draft_rng, root, 2);
    ++counts[two[0] * kVocab + two[1]];
  }
  const auto first = shaped_distribution(models().target[root].data(), kVocab, sp);
  std::vector<double> joint(kVocab * kVocab);
  for (int64_t a = 0; a < kVocab; ++a) {
    const auto second = shaped_distribution(models().target[a].data(), kVocab, sp);
    for (int64_t b = 0; b < kVocab; ++b) joint[a * kVocab + b] = first[a] * second[b];
  }
  return chi_square(counts, joint, kTrials);
}

// Drafts: a chain of `depth` tokens each sampled from the drafter.
TreeBuilder sampled_chain(int depth) {
  return [depth](int32_t root, std::mt19937_64& rng) {
    DraftTree tree(root);
    int32_t node = 0;
    for (int d = 0; d < depth; ++d) node = add_sampled(tree, node, rng);
    return tree;
  };
}

// Drafts: k i.i.d. sampled children of the root, each continued by one sampled grandchild. With
// `sorted`, the root's children are stored by descending q (as a tree drafter that ranks its
// candidates might), which only a random visiting order keeps lossless.
TreeBuilder sampled_siblings(int k, bool sorted) {
  return [k, sorted](int32_t root, std::mt19937_64& rng) {
    std::vector<int32_t> tokens;
    DraftTree scratch(root);
    for (int i = 0; i < k; ++i) tokens.push_back(scratch.tokens[add_sampled(scratch, 0, rng)]);
    const auto& q = *models().draft[root];
    if (sorted) std::stable_sort(tokens.begin(), tokens.end(), [&](int32_t a, int32_t b) { return q[a] > q[b]; });
    DraftTree tree(root);
    tree.child_q[0] = models().draft[root];
    for (int32_t token : tokens) {
      const int32_t child = tree.add(0, token, DraftSource::Model, q[token]);
      add_sampled(tree, child, rng);
    }
    return tree;
  };
}

// Drafts with no q: three fixed retrieved continuations of the root (one duplicated), two deep.
TreeBuilder retrieved_tree() {
  return [](int32_t root, std::mt19937_64&) {
    DraftTree tree(root);
    const int32_t a = tree.add(0, (root + 1) % kVocab, DraftSource::Retrieval);
    tree.add(a, (root + 3) % kVocab, DraftSource::Retrieval);
    const int32_t b = tree.add(0, (root + 4) % kVocab, DraftSource::Retrieval);
    tree.add(b, root, DraftSource::Retrieval);
    tree.add(0, (root + 1) % kVocab, DraftSource::Retrieval);  // duplicate sibling
    return tree;
  };
}

// Drafts mixing both kinds under the root: two retrieved tokens and two sampled ones.
TreeBuilder mixed_siblings() {
  return [](int32_t root, std::mt19937_64& rng) {
    DraftTree tree(root);
    add_sampled(tree, 0, rng);
    const int32_t r = tree.add(0, (root + 2) % kVocab, DraftSource::Retrieval);
    tree.add(r, (root + 5) % kVocab, DraftSource::Retrieval);
    add_sampled(tree, add_sampled(tree, 0, rng), rng);
    tree.add(0, (root + 3) % kVocab, DraftSource::Retrieval);
    return tree;
  };
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Greedy

TEST_CASE("greedy: root-only tree commits the argmax at the root", "[spec][acceptor]") {
  DraftTree tree(3);
  auto logits = argmax_rows({4});
  auto r = GreedyAcceptor().accept(tree, logits.data(), kVocab);
  CHECK(r.path == std::vector<int32_t>{0});
  CHECK(r.next_token == 4);
  CHECK(r.verdicts == std::vector<NodeVerdict>{NodeVerdict::Accepted});
  CHECK(r.lossless);
}

TEST_CASE("greedy: descends while drafts match and takes the next token at the last accepted node", "[spec][acceptor]") {
  // root -> 1 -> 2 -> 3 and root -> 4; the target's argmax after root, 1, 2 is 1, 2, 5.
  DraftTree tree(0);
  const int32_t a = tree.add(0, 1, DraftSource::Model);
  const int32_t other = tree.add(0, 4, DraftSource::Model);
  const int32_t b = tree.add(a, 2, DraftSource::Model);
  const int32_t c = tree.add(b, 3, DraftSource::Model);
  const int32_t below_other = tree.add(other, 0, DraftSource::Model);
  auto logits = argmax_rows({1, 2, 0, 5, 0, 0});
  auto r = GreedyAcceptor().accept(tree, logits.data(), kVocab);
  CHECK(r.path == std::vector<int32_t>{0, a, b});
  CHECK(r.next_token == 5);  // the correction at node b, replacing the rejected 3
  CHECK(r.verdicts[other] == NodeVerdict::Rejected);
  CHECK(r.verdicts[c] == NodeVerdict::Rejected);
  CHECK(r.verdicts[below_other] == NodeVerdict::NotReached);

  // All drafts match: the next token is the bonus from the leaf's row.
  auto all = argmax_rows({1, 2, 0, 3, 4, 0});
  auto full = GreedyAcceptor().accept(tree, all.data(), kVocab);
  CHECK(full.path == std::vector<int32_t>{0, a, b, c});
  CHECK(full.next_token == 4);
}

TEST_CASE("greedy: a rejected first draft commits the target's argmax at the root", "[spec][acceptor]") {
  DraftTree tree(2);
  const int32_t a = tree.add(0, 1, DraftSource::Retrieval);
  tree.add(a, 1, DraftSource::Retrieval);
  auto logits = argmax_rows({3, 1, 1});
  auto r = GreedyAcceptor().accept(tree, logits.data(), kVocab);
  CHECK(r.path == std::vector<int32_t>{0});
  CHECK(r.next_token == 3);
  CHECK(r.verdicts == std::vector<NodeVerdict>{NodeVerdict::Accepted, NodeVerdict::Rejected, NodeVerdict::NotReached});
}

TEST_CASE("greedy: the longest matching path wins, even behind a duplicate sibling", "[spec][acceptor]") {
  // Siblings 0 -> 1 (a leaf) and 0 -> 1 -> 2: both match at depth 1, only the second goes deeper.
  DraftTree tree(0);
  const int32_t leaf = tree.add(0, 1, DraftSource::Model);
  const int32_t deep = tree.add(0, 1, DraftSource::Retrieval);
  const int32_t deeper = tree.add(deep, 2, DraftSource::Retrieval);
  auto logits = argmax_rows({1, 3, 2, 4});
  auto r = GreedyAcceptor().accept(tree, logits.data(), kVocab);
  CHECK(r.path == std::vector<int32_t>{0, deep, deeper});
  CHECK(r.next_token == 4);
  CHECK(r.verdicts[leaf] == NodeVerdict::Rejected);
}

TEST_CASE("greedy: equally long matching paths go to the first path", "[spec][acceptor]") {
  // 0 -> 1 -> 2 (nodes 1, 3) and 0 -> 1 -> 2 (nodes 2, 4): same tokens, different next tokens.
  DraftTree tree(0);
  const int32_t first = tree.add(0, 1, DraftSource::Model);
  const int32_t second = tree.add(0, 1, DraftSource::Model);
  const int32_t first_leaf = tree.add(first, 2, DraftSource::Model);
  const int32_t second_leaf = tree.add(second, 2, DraftSource::Model);
  auto logits = argmax_rows({1, 2, 2, 5, 3});
  auto r = GreedyAcceptor().accept(tree, logits.data(), kVocab);
  CHECK(r.path == std::vector<int32_t>{0, first, first_leaf});
  CHECK(r.next_token == 5);
  CHECK(r.verdicts[second] == NodeVerdict::Rejected);
  CHECK(r.verdicts[second_leaf] == NodeVerdict::NotReached);
}

TEST_CASE("greedy: malformed trees and out-of-vocabulary tokens are bugs", "[spec][acceptor]") {
  DraftTree tree(0);
  tree.add(0, static_cast<int32_t>(kVocab), DraftSource::Model);
  auto logits = argmax_rows({1, 1});
  CHECK_THROWS_AS(GreedyAcceptor().accept(tree, logits.data(), kVocab), std::logic_error);
  DraftTree broken(0);
  broken.add(0, 1, DraftSource::Model);
  broken.parents[1] = 1;
  CHECK_THROWS_AS(GreedyAcceptor().accept(broken, logits.data(), kVocab), std::logic_error);
}

// ---------------------------------------------------------------------------------------------
// Sampling: exact behaviour

TEST_CASE("sampling at temperature 0 is the greedy acceptor", "[spec][acceptor]") {
  std::mt19937_64 rng(5);
  SamplingAcceptor sampling;
  Sampler sampler(params(0.0, 3, 0.5, 9));
  for (int trial = 0; trial < 200; ++trial) {
    DraftTree tree = sampled_siblings(3, false)(trial % kVocab, rng);
    auto logits = target_rows(tree);
    auto expected = GreedyAcceptor().accept(tree, logits.data(), kVocab);
    auto got = sampling.accept(tree, logits.data(), kVocab, sampler);
    REQUIRE(got.path == expected.path);
    REQUIRE(got.next_token == expected.next_token);
    REQUIRE(got.verdicts == expected.verdicts);
  }
}

TEST_CASE("sampling: a seed reproduces every decision", "[spec][acceptor]") {
  auto run = [](uint64_t seed) {
    std::mt19937_64 rng(11);
    SamplingAcceptor acceptor;
    Sampler sampler(params(1.0, 0, 1.0, seed));
    std::vector<int32_t> trace;
    for (int trial = 0; trial < 300; ++trial) {
      DraftTree tree = mixed_siblings()(trial % kVocab, rng);
      auto logits = target_rows(tree);
      auto r = acceptor.accept(tree, logits.data(), kVocab, sampler);
      trace.insert(trace.end(), r.path.begin(), r.path.end());
      trace.push_back(r.next_token);
      for (auto v : r.verdicts) trace.push_back(static_cast<int32_t>(v));
    }
    return trace;
  };
  CHECK(run(42) == run(42));
  CHECK(run(42) != run(43));
}

TEST_CASE("sampling: the point-mass rule accepts certain tokens and never impossible ones", "[spec][acceptor]") {
  // Target logits 4 > 3 > ...: with top-k 1 the target is a point mass on token 0.
  std::vector<float> row{4.0f, 3.0f, 1.0f, 0.5f, 0.0f, -1.0f};
  DraftTree tree(2);
  const int32_t impossible = tree.add(0, 1, DraftSource::Retrieval);
  const int32_t certain = tree.add(0, 0, DraftSource::Retrieval);
  std::vector<float> logits;
  for (int i = 0; i < 3; ++i) logits.insert(logits.end(), row.begin(), row.end());
  SamplingAcceptor acceptor;
  Sampler sampler(params(1.0, 1, 1.0, 3));
  for (int trial = 0; trial < 1000; ++trial) {
    auto r = acceptor.accept(tree, logits.data(), kVocab, sampler);
    REQUIRE(r.path == std::vector<int32_t>{0, certain});
    REQUIRE(r.verdicts[impossible] == NodeVerdict::Rejected);
    REQUIRE(r.next_token == 0);
  }
}

TEST_CASE("sampling: inconsistent drafter rows are bugs", "[spec][acceptor]") {
  DraftTree tree(0);
  tree.add(0, 2, DraftSource::Model, 0.0f);
  auto logits = argmax_rows({1, 1});
  SamplingAcceptor acceptor;
  Sampler sampler(params(1.0, 0, 1.0, 1));
  tree.child_q[0] = std::make_shared<const std::vector<float>>(std::vector<float>{0.5f, 0.5f});
  CHECK_THROWS_AS(acceptor.accept(tree, logits.data(), kVocab, sampler), std::logic_error);
  tree.child_q[0] = std::make_shared<const std::vector<float>>(std::vector<float>{0.5f, 0.5f, 0, 0, 0, 0});
  CHECK_THROWS_AS(acceptor.accept(tree, logits.data(), kVocab, sampler), std::logic_error);  // q(2) = 0
}

// ---------------------------------------------------------------------------------------------
// Sampling: the distribution oracle (200,000 speculative steps per case, fixed seeds)

TEST_CASE("oracle helper: the chi-square tail matches tabulated values", "[spec][acceptor]") {
  CHECK(chi_square_tail(5.18668, 2) == Approx(std::exp(-5.18668 / 2)).epsilon(1e-9));  // df 2: exp(-x/2)
  CHECK(chi_square_tail(10.828, 1) == Approx(0.001).epsilon(1e-3));   // tabulated 0.001 quantiles
  CHECK(chi_square_tail(20.515, 5) == Approx(0.001).epsilon(1e-3));
  CHECK(chi_square_tail(66.619, 35) == Approx(0.001).epsilon(2e-3));
  CHECK(chi_square_tail(4.351, 5) == Approx(0.5).epsilon(1e-3));      // median, series branch
  CHECK(chi_square_tail(0.0, 3) == 1.0);
}

TEST_CASE("oracle: a sampled chain commits tokens distributed as the target", "[spec][acceptor][oracle]") {
  SECTION("first token, depth-3 chain") { require_matches(first_token_test(sampled_chain(3), params(1.0), 0, 101)); }
  SECTION("first two tokens jointly, depth-2 chain") {
    require_matches(two_token_test(sampled_chain(2), params(1.0), 2, 102));
  }
}

TEST_CASE("oracle: k i.i.d. sampled siblings (SpecInfer residuals) commit the target", "[spec][acceptor][oracle]") {
  SECTION("k = 3, first token") { require_matches(first_token_test(sampled_siblings(3, false), params(1.0), 1, 201)); }
  SECTION("k = 4, stored sorted by q, first two tokens") {
    require_matches(two_token_test(sampled_siblings(4, true), params(1.0), 3, 202));
  }
}

TEST_CASE("oracle: retrieved (deterministic) siblings commit the target", "[spec][acceptor][oracle]") {
  SECTION("first token") { require_matches(first_token_test(retrieved_tree(), params(1.0), 4, 301)); }
  SECTION("first two tokens") { require_matches(two_token_test(retrieved_tree(), params(0.7), 5, 302)); }
}

TEST_CASE("oracle: sampled and retrieved siblings mixed at one node commit the target", "[spec][acceptor][oracle]") {
  require_matches(two_token_test(mixed_siblings(), params(1.0), 0, 401));
}

TEST_CASE("oracle: top-k and top-p shape the target exactly as autoregressive sampling", "[spec][acceptor][oracle]") {
  // The drafter keeps its unshaped q, so it often proposes tokens the shaped target excludes. The
  // two-token cases also check the bonus token drawn at a leaf (depth-1 drafts), which must be
  // shaped like every other target distribution.
  SECTION("top-k 3, sampled siblings, first token") {
    require_matches(first_token_test(sampled_siblings(3, false), params(1.0, 3), 0, 501));
  }
  SECTION("top-p 0.9, a one-token sampled chain, first two tokens") {
    require_matches(two_token_test(sampled_chain(1), params(1.0, 0, 0.9), 1, 502));
  }
  SECTION("top-k 4 and top-p 0.9 at T 1.2, retrieved tree, first two tokens") {
    require_matches(two_token_test(retrieved_tree(), params(1.2, 4, 0.9), 2, 503));
  }
  SECTION("top-k 4 and top-p 0.9 at T 1.2, mixed siblings, first two tokens") {
    require_matches(two_token_test(mixed_siblings(), params(1.2, 4, 0.9), 3, 504));
  }
}

TEST_CASE("oracle negative control: resampling from p instead of the residual is detected", "[spec][acceptor][oracle]") {
  // One sampled draft x ~ q, accepted with probability min(1, p/q) as it should be, but on
  // rejection the next token is drawn from p rather than norm(max(0, p - q)). This inflates the
  // tokens where q > p; the same test must reject it or it could not catch a broken residual.
  const int32_t root = 0;
  const auto p = shaped_distribution(models().target[root].data(), kVocab, params(1.0));
  const auto& q = *models().draft[root];
  std::mt19937_64 rng(601);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  const std::vector<double> qd(q.begin(), q.end());
  std::vector<long> counts(kVocab, 0);
  for (long t = 0; t < kTrials; ++t) {
    const int32_t x = draw(qd, uniform(rng));
    ++counts[uniform(rng) * q[x] < p[x] ? x : draw(p, uniform(rng))];
  }
  const ChiSquare c = chi_square(counts, p, kTrials);
  INFO(c.describe());
  CHECK(c.p_value < 1e-12);
}
