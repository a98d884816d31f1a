// CSD's verification (the CSD paper Algorithm 1): the correction memory built from a hand-made sequence
// of rejections equals the hand-computed table; the acceptor rescues a rejected drafted token
// exactly when the memory has seen the pair lambda times (this rejection included) and the logit
// gap passes log tau, with the ablations dropping one condition each; with lambda = infinity it
// is the lossless acceptor, token for token, at T = 0 and at T > 0 (same random stream).
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>

#include <nlohmann/json.hpp>

#include "speculative/correction_memory.h"
#include "speculative/csd_acceptor.h"
#include "speculative/sampling_acceptor.h"
#include "util/error.h"
#include "random_distributions.h"

using namespace specd;

namespace {

constexpr int64_t kVocab = 8;

// A chain root -> tokens[0] -> tokens[1] ...; q rows when sampled.
DraftTree chain(int32_t root, const std::vector<int32_t>& tokens, const std::vector<std::vector<float>>* q_rows = nullptr) {
  DraftTree tree(root);
  int32_t parent = 0;
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (q_rows) tree.child_q[parent] = std::make_shared<const std::vector<float>>((*q_rows)[i]);
    parent = tree.add(parent, tokens[i], DraftSource::Model, q_rows ? (*q_rows)[i][tokens[i]] : 1.0f);
  }
  return tree;
}

SamplingParams at(double temperature, uint64_t seed = 1) {
  SamplingParams p;
  p.temperature = temperature;
  p.seed = seed;
  return p;
}

}  // namespace

TEST_CASE("csd: the memory of a hand-made sequence of rejections is the hand-counted table", "[csd]") {
  CorrectionMemory memory;
  memory.set(3, 4, 10);  // calibrated
  const std::vector<std::tuple<int32_t, int32_t, float>> events{{1, 2, -0.5f}, {3, 4, -1.0f}, {1, 2, -2.0f}, {5, 6, -0.25f}, {1, 2, -1.5f}};
  for (const auto& [x, t, gap] : events) memory.record(x, t, gap, 1);
  CHECK(memory.count(1, 2) == 3);
  CHECK(memory.count(3, 4) == 11);
  CHECK(memory.count(5, 6) == 1);
  CHECK(memory.count(2, 1) == 0);  // ordered pairs
  CHECK(memory.online_records() == 5);
  CHECK(memory.online_log().size() == 5);
  const auto entries = memory.entries();
  REQUIRE(entries.size() == 3);
  CHECK((entries[0].draft_token == 3 && entries[0].count == 11 && entries[0].online == 1));
  CHECK((entries[1].draft_token == 1 && entries[1].count == 3 && entries[1].online == 3));
  CHECK(entries[1].gap_min == -2.0f);
  CHECK(entries[1].gap_max == -0.5f);
  CHECK(entries[1].gap_sum == Approx(-4.0));
  CHECK((entries[2].draft_token == 5 && entries[2].count == 1));
}

TEST_CASE("csd: a full memory drops the pairs seen once, then refuses new pairs", "[csd]") {
  CorrectionMemory memory(3);
  memory.record(1, 1, 0, 1);
  memory.record(2, 2, 0, 1);
  memory.record(2, 2, 0, 1);
  memory.record(3, 3, 0, 1);
  memory.record(4, 4, 0, 1);  // full: (1,1) and (3,3) are dropped
  CHECK(memory.size() == 2);
  CHECK(memory.count(1, 1) == 0);
  CHECK(memory.count(2, 2) == 2);
  CHECK(memory.count(4, 4) == 1);
}

TEST_CASE("csd: a rejected token is rescued exactly when frequent and within the gate", "[csd]") {
  // Row 0 (after the root): target argmax 2; drafted token 5 has logit gap z(5) - z(2).
  auto logits_with_gap = [](float gap) {
    std::vector<float> rows(3 * kVocab, 0.0f);
    rows[0 * kVocab + 2] = 4.0f;
    rows[0 * kVocab + 5] = 4.0f + gap;
    rows[1 * kVocab + 7] = 3.0f;  // after the rescued token the target wants 7
    rows[2 * kVocab + 1] = 3.0f;
    return rows;
  };
  const DraftTree tree = chain(0, {5, 7});
  Sampler greedy(at(0.0));
  const double log_tau = std::log(0.01);

  SECTION("lambda counts this rejection: the lambda-th sighting is rescued") {
    auto memory = std::make_shared<CorrectionMemory>();
    CsdAcceptor csd(memory, CsdOptions{3, 0.01});
    const auto rows = logits_with_gap(-1.0f);
    for (int sighting = 1; sighting <= 3; ++sighting) {
      const AcceptResult r = csd.accept(tree, rows.data(), kVocab, greedy);
      CAPTURE(sighting);
      CHECK(memory->count(5, 2) == sighting);
      if (sighting < 3) {
        CHECK(r.path == std::vector<int32_t>{0});
        CHECK(r.next_token == 2);
        CHECK(r.verdicts[1] == NodeVerdict::Rejected);
        CHECK(std::holds_alternative<std::monostate>(r.detail));  // no rescue, nothing to name
      } else {
        CHECK(r.path == std::vector<int32_t>{0, 1, 2});  // rescued 5, then 7 matches
        CHECK(r.verdicts[1] == NodeVerdict::Rescued);
        CHECK(r.verdicts[2] == NodeVerdict::Accepted);
        CHECK(r.scores[1] == -1.0f);
        CHECK(std::isnan(r.scores[2]));
        CHECK(r.next_token == 1);
        CHECK_FALSE(r.lossless);
        CHECK(accepted_verdicts(r) == "C,A");
        // The trace detail names the rescued pair: drafted 5 for the target's argmax 2, gap -1.
        const auto& rescues = std::get<CsdAcceptance>(r.detail).rescues;
        REQUIRE(rescues.size() == 1);
        CHECK(rescues[0].draft == 5);
        CHECK(rescues[0].target == 2);
        CHECK(rescues[0].gap == -1.0);
      }
    }
  }
  SECTION("the gate: a gap below log tau is not rescued, however frequent") {
    auto memory = std::make_shared<CorrectionMemory>();
    memory->set(5, 2, 100);
    CsdAcceptor csd(memory, CsdOptions{6, 0.01});
    const auto far = logits_with_gap(static_cast<float>(log_tau) - 0.01f);
    CHECK(csd.accept(tree, far.data(), kVocab, greedy).verdicts[1] == NodeVerdict::Rejected);
    const auto near = logits_with_gap(static_cast<float>(log_tau) + 0.01f);
    CHECK(csd.accept(tree, near.data(), kVocab, greedy).verdicts[1] == NodeVerdict::Rescued);
  }
  SECTION("ablations: the memory alone and the gate alone") {
    const auto far = logits_with_gap(-10.0f);
    auto frequent = std::make_shared<CorrectionMemory>();
    frequent->set(5, 2, 100);
    CHECK(CsdAcceptor(frequent, CsdOptions{6, 0.01, true, false}).accept(tree, far.data(), kVocab, greedy).verdicts[1] ==
          NodeVerdict::Rescued);
    const auto near = logits_with_gap(-0.5f);
    auto empty = std::make_shared<CorrectionMemory>();
    CHECK(CsdAcceptor(empty, CsdOptions{6, 0.01, false, true}).accept(tree, near.data(), kVocab, greedy).verdicts[1] ==
          NodeVerdict::Rescued);
    CHECK(CsdAcceptor(empty, CsdOptions{6, 0.01, true, true}).accept(tree, near.data(), kVocab, greedy).verdicts[1] ==
          NodeVerdict::Rejected);
  }
  SECTION("bad thresholds and trees") {
    auto memory = std::make_shared<CorrectionMemory>();
    CHECK_THROWS_AS(CsdAcceptor(memory, CsdOptions{0, 0.01}), InputError);
    CHECK_THROWS_AS(CsdAcceptor(memory, CsdOptions{6, 0.0}), InputError);
    DraftTree branching(0);
    branching.add(0, 1, DraftSource::Model);
    branching.add(0, 2, DraftSource::Model);
    std::vector<float> rows(3 * kVocab, 0.0f);
    CHECK_THROWS_AS(CsdAcceptor(memory, {}).accept(branching, rows.data(), kVocab, greedy), std::logic_error);
  }
}

TEST_CASE("csd: with lambda = infinity it is the lossless acceptor, token for token", "[csd]") {
  std::mt19937_64 rng(7);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  const int64_t never = std::numeric_limits<int64_t>::max();
  for (double temperature : {0.0, 0.6, 1.0}) {
    auto memory = std::make_shared<CorrectionMemory>();
    CsdAcceptor csd(memory, CsdOptions{never, 1.0 / 3.0});
    SamplingAcceptor lossless;
    Sampler a(at(temperature, 11)), b(at(temperature, 11));
    for (int trial = 0; trial < 400; ++trial) {
      const int depth = 1 + static_cast<int>(rng() % 5);
      std::vector<float> logits((depth + 1) * kVocab);
      for (float& z : logits) z = normal(rng);
      std::vector<int32_t> tokens;
      std::vector<std::vector<float>> q_rows;
      for (int d = 0; d < depth; ++d) {
        std::vector<float> q(kVocab);
        float total = 0;
        for (float& v : q) total += v = std::exp(normal(rng));
        for (float& v : q) v /= total;
        q_rows.push_back(q);
        tokens.push_back(static_cast<int32_t>(rng() % kVocab));
      }
      const DraftTree tree = temperature > 0 ? chain(3, tokens, &q_rows) : chain(3, tokens);
      const AcceptResult x = csd.accept(tree, logits.data(), kVocab, a);
      const AcceptResult y = lossless.accept(tree, logits.data(), kVocab, b);
      CAPTURE(temperature, trial);
      REQUIRE(x.path == y.path);
      REQUIRE(x.next_token == y.next_token);
      for (int32_t i = 0; i < tree.size(); ++i) CHECK((x.verdicts[i] == y.verdicts[i]));
    }
    CHECK(memory->online_records() > 0);  // rejections were recorded, none rescued
  }
}

// The drift the sweeps' contract bounds at T > 0 (calibrate/sweep_choice.h): a rescue replaces a
// residual draw y (p(y) > q(y)) with the drafted x (q(x) > p(x)), so the total-variation distance
// between the distribution of the emitted token and the target's is the probability of a rescue,
// sum over rescuable (x, y) of (q(x) - p(x))+ (p(y) - q(y))+ / beta. Checked three ways on one
// position: that formula, the rescue rate, and the TV of the emitted tokens' histogram.
TEST_CASE("csd: at T > 0 the TV between what it emits and the target's distribution is its rescue rate", "[csd][drift]") {
  std::mt19937_64 rng(21);
  std::normal_distribution<float> normal(0.0f, 1.5f);
  std::vector<float> logits(2 * kVocab);
  for (float& z : logits) z = normal(rng);
  const std::vector<float> q = test::random_distribution(rng, kVocab, 1.5f);
  const std::vector<std::vector<float>> q_rows{q};
  const SamplingParams params = at(1.0, 5);
  const std::vector<double> p = shaped_distribution(logits.data(), kVocab, params);
  // Pairs the memory has seen lambda - 1 times (this rejection makes lambda); the gate keeps gaps above log tau.
  const int64_t lambda = 3;
  const double tau = 0.05;
  auto frequent = [](int32_t x, int32_t y) { return (x + 2 * y) % 5 != 0; };
  auto rescuable = [&](int32_t x, int32_t y) { return frequent(x, y) && logits[x] - logits[y] >= std::log(tau); };
  double beta = 0;
  for (int32_t y = 0; y < kVocab; ++y) beta += std::max(0.0, p[y] - q[y]);
  double tv = 0;
  for (int32_t x = 0; x < kVocab; ++x)
    for (int32_t y = 0; y < kVocab; ++y)
      if (x != y && rescuable(x, y)) tv += std::max(0.0, q[x] - p[x]) * std::max(0.0, p[y] - q[y]) / beta;
  REQUIRE(tv > 0.02);  // the rule moves mass here

  Sampler sampler(params);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  const std::vector<double> qd(q.begin(), q.end());
  constexpr int kTrials = 200000;
  std::vector<double> emitted(kVocab, 0);
  int64_t rescues = 0;
  for (int trial = 0; trial < kTrials; ++trial) {
    auto memory = std::make_shared<CorrectionMemory>();
    for (int32_t x = 0; x < kVocab; ++x)
      for (int32_t y = 0; y < kVocab; ++y)
        if (x != y && frequent(x, y)) memory->set(x, y, lambda - 1);
    CsdAcceptor csd(memory, CsdOptions{lambda, tau});
    const int32_t x = draw(qd, uniform(rng));
    const AcceptResult r = csd.accept(chain(3, {x}, &q_rows), logits.data(), kVocab, sampler);
    emitted[r.path.size() > 1 ? x : r.next_token] += 1.0 / kTrials;
    rescues += r.verdicts[1] == NodeVerdict::Rescued;
  }
  double histogram_tv = 0;
  for (int32_t t = 0; t < kVocab; ++t) histogram_tv += 0.5 * std::abs(emitted[t] - p[t]);
  const double rate = static_cast<double>(rescues) / kTrials;
  CAPTURE(tv, rate, histogram_tv);
  CHECK(std::abs(rate - tv) <= 4 * std::sqrt(tv * (1 - tv) / kTrials));
  // The histogram's TV carries sampling noise of about sqrt(V / N) / 2 on top.
  CHECK(std::abs(histogram_tv - tv) <= 0.006);
}
