// ARC-Decode's runtime parts without a model: the entropy-guided pruner (hand-computed kept sets,
// prefix closure, the root, no emptied depth, epsilon = 0 keeps all), the LTS acceptor (hand-
// computed terms; with theta > 1 it is SamplingAcceptor draw for draw at T = 0 and T > 0) and the
// artifact's constants (refused for other sampling settings, with one line).
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <memory>
#include <random>

#include <nlohmann/json.hpp>

#include "artifact/artifact.h"
#include "sampling/sampler.h"
#include "speculative/arc_acceptor.h"
#include "speculative/arc_pruner.h"
#include "speculative/calibrated_parts.h"
#include "speculative/sampling_acceptor.h"
#include "util/error.h"
#include "random_distributions.h"

using namespace specd;

namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

float lg(double p) { return static_cast<float>(std::log(p)); }

std::vector<int32_t> kept_nodes(const std::vector<char>& keep) {
  std::vector<int32_t> nodes;
  for (size_t i = 0; i < keep.size(); ++i)
    if (keep[i]) nodes.push_back(static_cast<int32_t>(i));
  return nodes;
}

using Nodes = std::vector<int32_t>;

// A random tree whose scores are cumulative log-probabilities (a child never outscores its parent).
DraftTree random_scored_tree(std::mt19937_64& rng, int32_t nodes) {
  DraftTree tree(0);
  std::uniform_real_distribution<double> unit(0.01, 1.0);
  for (int32_t i = 1; i <= nodes; ++i) {
    const int32_t parent = static_cast<int32_t>(rng() % static_cast<uint64_t>(i));
    const float score = (parent == 0 ? 0.0f : tree.scores[parent]) + lg(unit(rng));
    tree.add(parent, static_cast<int32_t>(rng() % 50), DraftSource::Model, 1.0f, score);
  }
  return tree;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Pruner

TEST_CASE("arc pruner: a small tree keeps the hand-computed set", "[arc][pruner]") {
  // depth 1: a 0.8, b 0.17, c 0.03 -> theta_1 = 0.17 (0.97 of the mass), c dropped;
  // depth 2: a1 0.4, a2 0.24, b1 0.153, c1 0.027 -> theta_2 = tau_2 = 0.153, c1 dropped.
  DraftTree tree(7);
  const int32_t a = tree.add(0, 1, DraftSource::Model, 1, lg(0.8));
  const int32_t b = tree.add(0, 2, DraftSource::Model, 1, lg(0.17));
  const int32_t c = tree.add(0, 3, DraftSource::Model, 1, lg(0.03));
  tree.add(a, 4, DraftSource::Model, 1, lg(0.4));
  tree.add(a, 5, DraftSource::Model, 1, lg(0.24));
  tree.add(b, 6, DraftSource::Model, 1, lg(0.153));
  tree.add(c, 7, DraftSource::Model, 1, lg(0.027));
  CHECK(kept_nodes(arc_keep_set(tree, 0.0, {0.05, 1.0})) == Nodes{0, 1, 2, 4, 5, 6});
  // H_m scales a depth uniformly: the same set at any entropy.
  CHECK(kept_nodes(arc_keep_set(tree, 0.7, {0.05, 1.0})) == Nodes{0, 1, 2, 4, 5, 6});
  ArcPruner pruner({0.05, 1.0});
  const DraftTree pruned = pruner.prune(tree, PruneContext{0.3});
  CHECK(pruned.tokens == std::vector<int32_t>{7, 1, 2, 4, 5, 6});
  CHECK(pruned.parents == std::vector<int32_t>{-1, 0, 0, 1, 1, 2});
}

TEST_CASE("arc pruner: leaf safety drops a drafted leaf below tau_d that theta_d keeps", "[arc][pruner]") {
  // depth 1: a 0.6 (expanded), b 0.32, c 0.08 -> theta_1 = 0.08 keeps all, tau_1 = 0.32 drops c.
  DraftTree tree(0);
  const int32_t a = tree.add(0, 1, DraftSource::Model, 1, lg(0.6));
  tree.add(0, 2, DraftSource::Model, 1, lg(0.32));
  tree.add(0, 3, DraftSource::Model, 1, lg(0.08));
  tree.add(a, 4, DraftSource::Model, 1, lg(0.54));
  CHECK(kept_nodes(arc_keep_set(tree, 0.0, {0.05, 1.0})) == Nodes{0, 1, 2, 4});
}

TEST_CASE("arc pruner: a kept parent that lost all children gets its best child back, one level", "[arc][pruner]") {
  // depth 2: a1 0.01 against b1 0.49 -> a1 below theta_2, reinserted under the kept a; depth 3:
  // a11 below theta_3 under the reinserted a1 is not reinserted.
  DraftTree tree(0);
  const int32_t a = tree.add(0, 1, DraftSource::Model, 1, lg(0.5));
  const int32_t b = tree.add(0, 2, DraftSource::Model, 1, lg(0.5));
  const int32_t a1 = tree.add(a, 3, DraftSource::Model, 1, lg(0.01));
  const int32_t b1 = tree.add(b, 4, DraftSource::Model, 1, lg(0.49));
  tree.add(a1, 5, DraftSource::Model, 1, lg(0.005));
  tree.add(b1, 6, DraftSource::Model, 1, lg(0.441));
  CHECK(kept_nodes(arc_keep_set(tree, 0.0, {0.05, 1.0})) == Nodes{0, 1, 2, 3, 4, 6});
}

TEST_CASE("arc pruner: a depth whose mass hangs below a dropped node is not emptied", "[arc][pruner]") {
  // depth 1: a 0.97 (a leaf), b 0.03 -> b dropped; depth 2 has only b's child: it comes back with b.
  DraftTree tree(0);
  tree.add(0, 1, DraftSource::Model, 1, lg(0.97));
  const int32_t b = tree.add(0, 2, DraftSource::Model, 1, lg(0.03));
  tree.add(b, 3, DraftSource::Model, 1, lg(0.03));
  tree.add(0, 4, DraftSource::Model, 1, lg(0.0001));
  CHECK(kept_nodes(arc_keep_set(tree, 0.0, {0.05, 1.0})) == Nodes{0, 1, 2, 3});
}

TEST_CASE("arc pruner: unscored and sampled nodes are never pruned, and keep their ancestors", "[arc][pruner]") {
  DraftTree tree(0);
  tree.add(0, 1, DraftSource::Model, 1, lg(0.99));
  const int32_t low = tree.add(0, 2, DraftSource::Model, 1, lg(0.001));
  tree.add(low, 3, DraftSource::Retrieval, 1, kNaN);  // retrieval below a pruned node
  CHECK(kept_nodes(arc_keep_set(tree, 0.0, {0.05, 1.0})) == Nodes{0, 1, 2, 3});

  DraftTree sampled(0);
  sampled.child_q[0] = std::make_shared<const std::vector<float>>(std::vector<float>{0.5f, 0.5f});
  sampled.add(0, 1, DraftSource::Model, 0.5f, lg(0.99));
  sampled.add(0, 0, DraftSource::Model, 0.5f, lg(0.001));
  CHECK(kept_nodes(arc_keep_set(sampled, 0.0, {0.05, 1.0})) == Nodes{0, 1, 2});
}

TEST_CASE("arc pruner: random trees stay prefix-closed, keep the root and every depth, epsilon 0 keeps all", "[arc][pruner]") {
  std::mt19937_64 rng(2024);
  int64_t dropped = 0;
  for (int trial = 0; trial < 500; ++trial) {
    const DraftTree tree = random_scored_tree(rng, 1 + static_cast<int32_t>(rng() % 30));
    const double entropy = std::uniform_real_distribution<double>(0.0, 1.0)(rng);
    CHECK(kept_nodes(arc_keep_set(tree, entropy, {0.0, 1.0})).size() == static_cast<size_t>(tree.size()));
    for (double epsilon : {0.01, 0.05, 0.3, 0.9}) {
      const std::vector<char> keep = arc_keep_set(tree, entropy, {epsilon, 1.0});
      CAPTURE(trial, epsilon);
      REQUIRE(keep[0]);
      std::vector<char> depth_had(32, 0), depth_kept(32, 0);
      for (int32_t i = 1; i < tree.size(); ++i) {
        if (keep[i]) REQUIRE(keep[tree.parents[i]]);
        depth_had[tree.depths[i]] = 1;
        if (keep[i]) depth_kept[tree.depths[i]] = 1;
        dropped += !keep[i];
      }
      CHECK(depth_had == depth_kept);
      ArcPruner({epsilon, 1.0}).prune(tree, PruneContext{entropy}).check();
    }
  }
  CHECK(dropped > 0);
}

TEST_CASE("arc pruner: options out of range are InputErrors", "[arc][pruner]") {
  CHECK_THROWS_AS(ArcPruner({1.0, 1.0}), InputError);
  CHECK_THROWS_AS(ArcPruner({-0.1, 1.0}), InputError);
  CHECK_THROWS_AS(ArcPruner({0.05, -1.0}), InputError);
}

// ---------------------------------------------------------------------------------------------
// Acceptor

namespace {

constexpr int64_t kVocab = 6;
constexpr int64_t kHidden = 2;

SamplingParams at(double temperature, uint64_t seed, int top_k = 0, double top_p = 1.0) {
  SamplingParams p;
  p.temperature = temperature;
  p.seed = seed;
  p.top_k = top_k;
  p.top_p = top_p;
  return p;
}

// e_t = (t, 1 - t): ||W (e_a - e_b)||^2 = (a - b)^2 (w0^2 + w1^2).
EmbeddingLookup line_embeddings() {
  return {kHidden, [](int32_t token, float* out) {
            out[0] = static_cast<float>(token);
            out[1] = 1.0f - static_cast<float>(token);
          }};
}

ArcLtsConstants constants(double c_s = 0.1, double alpha_kappa = 0.2, double tau = 1.0) {
  ArcLtsConstants k;
  k.c_s = c_s;
  k.alpha_kappa = alpha_kappa;
  k.tau_delta = tau;
  k.epsilon = 1e-6;
  k.whitening = {0.5f, 0.5f};
  return k;
}

// A random tree over kVocab tokens: each node's children either sampled from a random q
// (child_q set) or deterministic; duplicates allowed.
DraftTree random_tree(std::mt19937_64& rng) {
  DraftTree tree(static_cast<int32_t>(rng() % kVocab));
  const int32_t nodes = static_cast<int32_t>(rng() % 9);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (int32_t i = 1; i <= nodes; ++i) {
    const int32_t parent = static_cast<int32_t>(rng() % static_cast<uint64_t>(i));
    const bool sampled = tree.child_q[parent] != nullptr || (tree.children(parent).empty() && rng() % 2 == 0);
    if (sampled) {
      if (!tree.child_q[parent]) {
        std::vector<float> q(kVocab);
        float total = 0;
        for (float& v : q) total += v = std::exp(normal(rng));
        for (float& v : q) v /= total;
        tree.child_q[parent] = std::make_shared<const std::vector<float>>(q);
      }
      const std::vector<double> q(tree.child_q[parent]->begin(), tree.child_q[parent]->end());
      const int32_t token = draw(q, std::uniform_real_distribution<double>(0.0, 1.0)(rng));
      tree.add(parent, token, DraftSource::Model, static_cast<float>(q[token]));
    } else {
      tree.add(parent, static_cast<int32_t>(rng() % kVocab), DraftSource::Retrieval);
    }
  }
  return tree;
}

}  // namespace

TEST_CASE("arc acceptor: the LTS terms are the hand-computed ones", "[arc][acceptor]") {
  ArcAcceptor arc(constants(), line_embeddings(), 0.3);
  const std::vector<float> row{2.0f, 1.0f, 0.0f, 0.0f, 0.0f, 0.0f};
  // T = 1: t_m = 0, margin log p(0) - log p(1) = 1; ||W(e_1 - e_0)||^2 = 2 * 0.25 = 0.5.
  LtsTerms t = arc.terms(row.data(), kVocab, at(1.0, 0), 1);
  CHECK(t.target == 0);
  CHECK(t.u_emb == Approx(0.1 * 0.5));
  CHECK(t.u_logit == Approx(0.2 * 1.0));
  CHECK(t.lts == Approx(1.0 - 0.05));
  // T = 0.5: the margin doubles; token 3: ||W(e_3 - e_0)||^2 = 9 * 0.5.
  t = arc.terms(row.data(), kVocab, at(0.5, 0), 3);
  CHECK(t.u_logit == Approx(0.2 * 16.0));  // (2 - 0) / 0.5 = 4 nats
  CHECK(t.u_emb == Approx(0.1 * 4.5));
  CHECK(t.lts == Approx(1.0 - 0.45));
  // Top-k 1 zeroes p~(1): clamped at epsilon; greedy (T = 0) is the point mass, the same.
  const double clamped = 0.2 * std::log(1e-6) * std::log(1e-6);
  CHECK(arc.terms(row.data(), kVocab, at(1.0, 0, 1), 1).u_logit == Approx(clamped));
  CHECK(arc.terms(row.data(), kVocab, at(0.0, 0), 1).u_logit == Approx(clamped));
  CHECK(arc.terms(row.data(), kVocab, at(0.0, 0), 0).lts == 1.0);
}

TEST_CASE("arc acceptor: a rejected child is relaxed when LTS >= theta, and verification goes on below it", "[arc][acceptor]") {
  // Greedy: the root's argmax is 0 but the draft is 1 (LTS 1 - 0.05 = 0.95); below it the draft 4
  // matches the argmax of row 1, and the next token is row 2's argmax.
  DraftTree tree(3);
  tree.add(0, 1, DraftSource::Model, 1, 0);
  tree.add(0, 5, DraftSource::Model, 1, 0);  // a worse sibling: ||e_5 - e_0|| gives LTS 1 - 1.25
  tree.add(1, 4, DraftSource::Model, 1, 0);
  std::vector<float> logits(4 * kVocab, 0.0f);
  logits[0 * kVocab + 0] = 3;
  logits[1 * kVocab + 4] = 3;
  logits[3 * kVocab + 2] = 3;
  for (double theta : {0.3, 0.96}) {
    ArcAcceptor arc(constants(), line_embeddings(), theta);
    Sampler sampler(at(0.0, 1));
    const AcceptResult r = arc.accept(tree, logits.data(), kVocab, sampler);
    CHECK_FALSE(r.lossless);
    const auto& lts = std::get<ArcAcceptance>(r.detail).lts;
    REQUIRE(lts.size() == 2);
    CHECK(lts[0].node == 1);
    CHECK(lts[0].target == 0);
    CHECK(lts[0].u_emb == Approx(0.05));
    CHECK(lts[1].lts == Approx(1.0 - 1.25));
    if (theta < 0.95) {
      CHECK(r.path == std::vector<int32_t>{0, 1, 3});
      CHECK(r.verdicts[1] == NodeVerdict::Relaxed);
      CHECK(r.verdicts[2] == NodeVerdict::Rejected);
      CHECK(r.verdicts[3] == NodeVerdict::Accepted);
      CHECK(r.scores[1] == Approx(0.95));
      CHECK(std::isnan(r.scores[3]));
      CHECK(r.next_token == 2);
      CHECK(lts[0].relaxed);
    } else {
      CHECK(r.path == std::vector<int32_t>{0});
      CHECK(r.next_token == 0);
      CHECK(r.count(NodeVerdict::Relaxed) == 0);
    }
  }
  // Sampling with top-k 1: the draft 1 is rejected for certain, relaxed, then the bonus token is
  // drawn at node 1 (its top-1: 4).
  DraftTree chain(3);
  chain.add(0, 1, DraftSource::Model, 1, 0);
  ArcAcceptor arc(constants(), line_embeddings(), 0.3);
  Sampler sampler(at(1.0, 5, 1));
  const AcceptResult r = arc.accept(chain, logits.data(), kVocab, sampler);
  CHECK(r.path == std::vector<int32_t>{0, 1});
  CHECK(r.verdicts[1] == NodeVerdict::Relaxed);
  CHECK(r.next_token == 4);
}

TEST_CASE("arc acceptor: each child is scored with the bucket its depth and the root's entropy select", "[arc][acceptor]") {
  // The greedy tree above: child 1 of the root (depth 1) scores LTS 1 - 0.05 / tau under "all"'s scales.
  DraftTree tree(3);
  tree.add(0, 1, DraftSource::Model, 1, 0);
  tree.add(1, 4, DraftSource::Model, 1, 0);
  std::vector<float> logits(3 * kVocab, 0.0f);
  logits[0 * kVocab + 0] = 3;
  logits[1 * kVocab + 2] = 3;  // node 1's argmax is 2: its child 4 is rejected
  const ArcConstants all{"all", 100, 96, 0.1, 0.2, 1.0};
  auto relaxed_nodes = [&](const std::vector<ArcConstants>& buckets, double root_entropy) {
    ArcLtsConstants k = constants();
    k.buckets = buckets;
    ArcAcceptor arc(k, line_embeddings(), 0.3);
    CHECK(arc.uses_root_entropy() == (buckets.size() > 1));
    arc.set_root_entropy(root_entropy);
    Sampler sampler(at(0.0, 1));
    const AcceptResult r = arc.accept(tree, logits.data(), kVocab, sampler);
    std::vector<int32_t> out;
    for (const LtsNode& n : std::get<ArcAcceptance>(r.detail).lts)
      if (n.relaxed) out.push_back(static_cast<int32_t>(n.node));
    return out;
  };
  // "all" alone: node 1 relaxes (LTS 0.95); below it node 2 (||W(e_4 - e_2)||^2 = 2, U = 0.2) relaxes at 0.8.
  CHECK(relaxed_nodes({}, 0) == std::vector<int32_t>{1, 2});
  // A strict depth-1 bucket keeps node 1 from relaxing; depth 2 is served by "all".
  const ArcConstants depth1{"depth=1", 50, 48, 0.1, 0.2, 0.01};
  CHECK(relaxed_nodes({all, depth1}, 0).empty());
  const ArcConstants depth2{"depth=2", 50, 48, 0.1, 0.2, 0.01};
  CHECK(relaxed_nodes({all, depth2}, 0) == std::vector<int32_t>{1});
  // An entropy bucket serves the steps whose root H_m lies in it.
  const ArcConstants low{"entropy=[0,0.5)", 50, 48, 0.1, 0.2, 0.01};
  CHECK(relaxed_nodes({all, low}, 0.2).empty());
  CHECK(relaxed_nodes({all, low}, 0.7) == std::vector<int32_t>{1, 2});
}

TEST_CASE("arc acceptor: with theta above 1 it is SamplingAcceptor, result and random stream", "[arc][acceptor]") {
  std::mt19937_64 rng(99);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  for (const SamplingParams& params : {at(0.0, 3), at(0.7, 3), at(1.0, 4), at(1.0, 5, 3), at(0.9, 6, 0, 0.8)}) {
    ArcAcceptor arc(constants(0.01, 0.01, 1.0), line_embeddings(), 1.01);
    SamplingAcceptor lossless;
    Sampler a(params), b(params);
    int64_t evaluated = 0;
    for (int trial = 0; trial < 400; ++trial) {
      const DraftTree tree = random_tree(rng);
      std::vector<float> logits(static_cast<size_t>(tree.size()) * kVocab);
      for (float& z : logits) z = normal(rng);
      const AcceptResult x = arc.accept(tree, logits.data(), kVocab, a);
      const AcceptResult y = lossless.accept(tree, logits.data(), kVocab, b);
      CAPTURE(params.temperature, trial);
      REQUIRE(x.path == y.path);
      REQUIRE(x.next_token == y.next_token);
      for (int32_t i = 0; i < tree.size(); ++i) CHECK((x.verdicts[i] == y.verdicts[i]));
      CHECK(a.uniform() == b.uniform());  // the same draws were taken
      evaluated += std::holds_alternative<ArcAcceptance>(x.detail);
    }
    CHECK(evaluated > 0);  // LTS was computed (and refused) on rejections
  }
}

// ---------------------------------------------------------------------------------------------
// Constants from the artifact

TEST_CASE("arc constants: taken from bucket all, other sampling settings are refused in one line", "[arc]") {
  Artifact artifact;
  ArcCalibration arc;
  arc.provenance.temperature = 1.0;
  arc.provenance.top_k = 0;
  arc.provenance.top_p = 1.0;
  arc.epsilon = 1e-5;
  arc.whitening = {0.5f, 2.0f};
  ArcConstants all;
  all.c_s = 0.3;
  all.alpha_kappa = 0.02;
  all.tau_delta = 0.07;
  arc.constants = {all};
  artifact.arc = arc;

  const ArcLtsConstants k = arc_constants_of(artifact, at(1.0, 9), 2, "pair-dir");
  CHECK(k.c_s == 0.3);
  CHECK(k.alpha_kappa == 0.02);
  CHECK(k.tau_delta == 0.07);
  CHECK(k.epsilon == 1e-5);
  CHECK(k.whitening == std::vector<float>{0.5f, 2.0f});
  CHECK(k.buckets.empty());  // "all" alone
  {
    Artifact bucketed = artifact;
    ArcConstants depth1 = all;
    depth1.bucket = "depth=1";
    depth1.tau_delta = 0.5;
    bucketed.arc->constants.push_back(depth1);
    const ArcLtsConstants b = arc_constants_of(bucketed, at(1.0, 9), 2, "pair-dir");
    REQUIRE(b.buckets.size() == 2);
    CHECK(b.buckets[1].bucket == "depth=1");
    CHECK(b.tau_delta == 0.07);  // "all" stays the default
  }

  CHECK_THROWS_WITH(arc_constants_of(artifact, at(0.7, 9), 2, "pair-dir"),
                    "pair-dir: its arc constants were calibrated for temperature 1, top-k 0, top-p 1, this run samples with "
                    "temperature 0.7, top-k 0, top-p 1 (calibrate arc at these settings)");
  CHECK_THROWS_AS(arc_constants_of(artifact, at(1.0, 9, 50), 2, "pair-dir"), InputError);
  CHECK_THROWS_AS(arc_constants_of(artifact, at(1.0, 9, 0, 0.9), 2, "pair-dir"), InputError);
  CHECK_THROWS_WITH(arc_constants_of(artifact, at(1.0, 9), 3, "pair-dir"), Catch::Contains("pair-dir: its arc whitening has 2 entries"));
  artifact.arc->constants[0].tau_delta = 0;
  CHECK_THROWS_AS(arc_constants_of(artifact, at(1.0, 9), 2, "pair-dir"), InputError);
  artifact.arc.reset();
  CHECK_THROWS_WITH(require_calibration(&artifact, kArcPolicy, "arc"), Catch::Contains("holds no arc calibration"));
}

// The drift the sweeps' contract bounds at T > 0 (calibrate/sweep_choice.h): ARC relaxes a child
// only where every child was rejected, in place of a residual draw that gives that child (zeroed
// by its own rejection) probability 0, so the TV between the emitted token's distribution and the
// target's is the probability of a relaxation. Two children drawn from q at the root each trial.
TEST_CASE("arc acceptor: at T > 0 the TV between what it emits and the target's distribution is its relaxation rate", "[arc][acceptor][drift]") {
  std::mt19937_64 rng(31);
  std::normal_distribution<float> normal(0.0f, 1.5f);
  std::vector<float> logits(3 * kVocab);
  for (float& z : logits) z = normal(rng);
  const std::vector<float> q = test::random_distribution(rng, kVocab, 1.5f);
  const SamplingParams params = at(1.0, 7);
  const std::vector<double> p = shaped_distribution(logits.data(), kVocab, params);
  const std::vector<double> qd(q.begin(), q.end());
  // theta relaxes some rejected pairs, not all (LTS falls with the token distance on the line).
  ArcAcceptor arc(constants(0.05, 0.05, 1.0), line_embeddings(), 0.6);
  Sampler sampler(params);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  constexpr int kTrials = 200000;
  std::vector<double> emitted(kVocab, 0);
  int64_t relaxations = 0;
  for (int trial = 0; trial < kTrials; ++trial) {
    DraftTree tree(3);
    tree.child_q[0] = std::make_shared<const std::vector<float>>(q);
    for (int c = 0; c < 2; ++c) {
      const int32_t token = draw(qd, uniform(rng));
      tree.add(0, token, DraftSource::Model, q[token]);
    }
    const AcceptResult r = arc.accept(tree, logits.data(), kVocab, sampler);
    emitted[r.path.size() > 1 ? tree.tokens[r.path[1]] : r.next_token] += 1.0 / kTrials;
    relaxations += r.path.size() > 1 && r.verdicts[r.path[1]] == NodeVerdict::Relaxed;
  }
  double histogram_tv = 0;
  for (int32_t t = 0; t < kVocab; ++t) histogram_tv += 0.5 * std::abs(emitted[t] - p[t]);
  const double rate = static_cast<double>(relaxations) / kTrials;
  CAPTURE(rate, histogram_tv);
  REQUIRE(rate > 0.02);       // the gate relaxes here
  REQUIRE(rate < 0.9 * (1 - p[std::max_element(p.begin(), p.end()) - p.begin()]));  // and not every rejection
  CHECK(std::abs(histogram_tv - rate) <= 0.006);
}
