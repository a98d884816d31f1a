// The cost-aware draft budget: it drafts long when verification is cheap and the drafts are
// accepted, not at all when they are not, and learns the acceptance rate from the steps.
#include <catch2/catch.hpp>

#include <cmath>

#include "speculative/draft_budget.h"

using namespace specd;

TEST_CASE("a cost curve interpolates between its points and extrapolates beyond them") {
  CostCurve curve({{1, 1.0}, {2, 1.5}, {4, 2.5}, {8, 5.0}});
  CHECK(curve.at(1) == Approx(1.0));
  CHECK(curve.at(3) == Approx(2.0));
  CHECK(curve.at(6) == Approx(3.75));
  CHECK(curve.at(12) == Approx(7.5));
  CHECK_THROWS(CostCurve({{2, 1.0}, {1, 2.0}}));
  CHECK_THROWS(CostCurve({{1, 0.0}}));
}

TEST_CASE("neither the curve nor the learned costs let a larger verify cost less than a smaller one") {
  // Measured at load, two rows timed below one (noise where a second row rides on the weight reads).
  const CostCurve curve({{1, 2.8}, {2, 2.5}, {4, 3.0}});
  CHECK(curve.at(2) == Approx(2.8));
  CHECK(curve.at(3) == Approx(2.9));
  CHECK(curve.points()[1].second == Approx(2.8));

  DraftBudget budget(CostCurve({{1, 1.0}, {2, 1.1}, {4, 1.5}}));
  for (int i = 0; i < 50; ++i) {
    budget.observe_cost(1, 3.0);  // plain steps
    budget.observe_cost(2, 2.6);  // one drafted row, timed lower: noise
  }
  CHECK(budget.cost_ms(1) == Approx(3.0).epsilon(0.01));
  CHECK(budget.cost_ms(2) == Approx(3.0).epsilon(0.01));       // not 2.6
  CHECK(budget.cost_ms(3) >= budget.cost_ms(2));
  // A drafted row expected to commit nothing never pays, however cheap it looks.
  CHECK(budget.rate_of(1, 1.0, 0) <= budget.rate_of(0, 1.0, 0));
  CHECK(budget.rate_of(2, expected_committed(2, {0.5, 0.5}), 0.1) == Approx(budget.rate(2, {0.5, 0.5}, INT32_MAX, 0.1)));
}

TEST_CASE("the budget maximises expected committed tokens per millisecond") {
  DraftBudgetOptions options;
  options.prior_acceptance = 0.8;
  SECTION("free verification: draft everything allowed") {
    DraftBudget budget(CostCurve({{1, 1.0}, {64, 1.0}}), options);
    CHECK(budget.nodes_for(0, 10) == 10);
  }
  SECTION("verification as dear as decoding each token: never draft") {
    options.probe_interval = 0;
    DraftBudget budget(CostCurve({{1, 1.0}, {64, 64.0}}), options);
    CHECK(budget.nodes_for(0, 10) == 0);
  }
  SECTION("the rate is (1 + a + ... + a^k) / (t(k + 1) + k c)") {
    options.draft_ms_per_node = 0.25;
    DraftBudget budget(CostCurve({{1, 1.0}, {2, 1.5}, {3, 2.0}}), options);
    CHECK(budget.rate(2, 0.5) == Approx((1 + 0.5 + 0.25) / (2.0 + 0.5)));
    // k = 1: 1.8 / 1.75 beats k = 0 (1.0) and k = 2 (2.44 / 2.5).
    CHECK(budget.nodes_for(0, 2) == 1);
  }
  SECTION("a tree of depth 2 gains nothing from a third node") {
    DraftBudget budget(CostCurve({{1, 1.0}, {2, 1.05}, {3, 1.1}, {4, 1.15}}), options);
    CHECK(budget.nodes_for(0, 3) == 3);
    CHECK(budget.nodes_for(0, 3, 2) == 2);
  }
}

TEST_CASE("under a batch load the budget maximises the batch's rate, priced by the batch's cost line when given") {
  DraftBudgetOptions options;
  options.prior_acceptance = 0.8;
  options.probe_interval = 0;
  // Alone, verifying is nearly free: draft all four.
  DraftBudget budget(CostCurve({{1, 1.0}, {64, 1.1}}), options);
  CHECK(budget.nodes_for(0, 4) == 4);
  // Seven other requests committing 7 tokens in 7 rows, on the same curve: still nearly free.
  budget.set_batch_load(BatchLoad{7, 7.0, 0.0});
  CHECK(budget.rate(1, 0.8) == Approx((7 + 1.8) / budget.cost_ms(9)));
  CHECK(budget.nodes_for(0, 4) == 4);
  // The batch's fitted line says a row costs 0.5 ms over a fixed 4 ms: a node pays if it brings
  // the batch's rate (8 tokens in 8 ms without drafts) times half a ms. The first two (0.8 and 0.64
  // expected tokens) do, and lift the rate to 1.049 per ms; the third (0.512) falls short of 0.524.
  budget.set_batch_load(BatchLoad{7, 7.0, 0.0, 4.0, 0.5});
  CHECK(budget.rate(0, 0.8) == Approx(8.0 / (4.0 + 0.5 * 8)));
  CHECK(budget.rate(2, 0.8) == Approx(9.44 / 9.0));
  CHECK(budget.nodes_for(0, 4) == 2);
  // A row as dear as the batch's whole rate per token: nothing pays.
  budget.set_batch_load(BatchLoad{7, 7.0, 0.0, 0.0, 1.0});
  CHECK(budget.nodes_for(0, 4) == 0);
  // Priced on the measured curve's shape: the second row rides on the weight reads.
  const CostCurve shape({{1, 2.2}, {2, 2.3}, {4, 3.0}, {8, 5.6}});
  const BatchLoad shaped{0, 0.0, 0.0, 0.5, 1.0, &shape};
  CHECK(shaped.step_ms(2) == Approx(2.8));
  budget.set_batch_load(shaped);
  CHECK(budget.rate(1, 0.8) == Approx(1.8 / 2.8));
}

TEST_CASE("acceptance is learned from the steps and drifts back to the prior without evidence") {
  DraftBudgetOptions options;
  options.prior_acceptance = 0.6;
  DraftBudget budget(CostCurve({{1, 1.0}, {2, 1.4}, {4, 2.2}, {8, 4.0}}), options);
  CHECK(budget.acceptance().first == Approx(0.6));
  const int32_t initial = budget.nodes_for(0, 8);
  CHECK(initial >= 1);

  for (int i = 0; i < 30; ++i) budget.observe(4, 0);  // every draft rejected at once
  CHECK(budget.acceptance().first < 0.1);
  CHECK(budget.nodes_for(0, 8) == 0);
  CHECK(budget.nodes_for(1, 8) == initial);  // another class is still at the prior

  for (int i = 0; i < 200; ++i) budget.observe(0, 0);  // AR steps: the evidence fades
  CHECK(budget.acceptance().first == Approx(0.6).margin(0.01));
  CHECK(budget.nodes_for(0, 8) == initial);

  for (int i = 0; i < 30; ++i) budget.observe(8, 8);  // every draft accepted whole
  CHECK(budget.acceptance().first > 0.95);
  CHECK(budget.nodes_for(0, 8) == 8);

  // A new request starts from what this one showed (reset() folds it into the class's history):
  // the last 30 steps' decayed counts, about 15.7 levels tried and kept, against the options'
  // prior worth 8.
  budget.reset();
  double kept = 0;
  for (int i = 0; i < 30; ++i) kept = 0.95 * kept + 1;
  CHECK(budget.acceptance().first == Approx((kept + 8 * 0.6) / (kept + 8)).margin(0.01));
  CHECK(budget.evidence() == 0);
}

TEST_CASE("a class's prior is what the earlier requests showed of it, counted once, and fades without evidence") {
  DraftBudgetOptions options;
  options.prior_acceptance = 0.6;
  // A memory-bound target: at the prior, a class drafts more than one node.
  DraftBudget budget(CostCurve({{1, 1.0}, {2, 1.05}, {4, 1.1}, {8, 1.3}}), options);
  const int32_t initial = budget.nodes_for(1, 8);
  REQUIRE(initial > 1);
  for (int i = 0; i < 30; ++i) budget.observe(1, 4, 0);  // a request whose 1-gram matches all fail
  const double tried = budget.evidence(1);
  budget.reset();
  // The next request: class 1 starts where the last one left it, and drafts less than at the
  // options' prior, where an unseen class starts.
  CHECK(budget.acceptance(1).first == Approx(8 * 0.6 / (tried + 8)));
  CHECK(budget.nodes_for(1, 8) < initial);
  CHECK(budget.nodes_for(2, 8) == initial);
  CHECK(budget.acceptance(2).first == Approx(0.6));
  // Idle within the request, class 1 drifts back to its history, not to 0.6.
  for (int i = 0; i < 200; ++i) budget.observe(0, 0);
  CHECK(budget.acceptance(1).first == Approx(8 * 0.6 / (tried + 8)));
  // This request's evidence counts once: against the history's prior, not added to it as well.
  budget.observe(1, 4, 4);
  const double prior = 8 * 0.6 / (tried + 8);
  CHECK(budget.acceptance(1).first == Approx((1 + options.prior_weight * prior) / (1 + options.prior_weight)));
  // Requests that never draft the class let its history fade (by 0.9 a request) back to 0.6.
  for (int r = 0; r < 60; ++r) budget.reset();
  CHECK(budget.acceptance(1).first == Approx(0.6).margin(0.02));
  CHECK(budget.nodes_for(1, 8) == initial);

  SECTION("without history (--draft-history off) every request starts at the options' prior") {
    options.history = false;
    DraftBudget forgetful(CostCurve({{1, 1.0}, {2, 1.05}, {4, 1.1}, {8, 1.3}}), options);
    for (int i = 0; i < 30; ++i) forgetful.observe(1, 4, 0);
    forgetful.reset();
    CHECK(forgetful.acceptance(1).first == Approx(0.6));
  }
}

TEST_CASE("each proposal class has its own acceptance, the drafter's limit is the best class's") {
  DraftBudgetOptions options;
  options.prior_acceptance = 0.6;
  DraftBudget budget(CostCurve({{1, 1.0}, {2, 1.4}, {4, 2.2}, {8, 4.0}}), options);
  for (int i = 0; i < 30; ++i) {
    budget.observe(1, 4, 0);  // 1-gram matches: rejected
    budget.observe(3, 8, 8);  // 3-gram matches: accepted whole
  }
  CHECK(budget.nodes_for(1, 8) == 0);
  CHECK(budget.nodes_for(3, 8) == 8);
  CHECK(budget.acceptance(2).first == Approx(0.6));  // unseen: the prior
}

TEST_CASE("verify costs are learned from the steps, unseen sizes follow the observed one-token cost") {
  DraftBudget budget(CostCurve({{1, 1.0}, {2, 1.2}, {4, 1.6}, {8, 2.4}}));
  CHECK(budget.cost_ms(4) == Approx(1.6));
  budget.observe_cost(1, 2.0);  // the machine (or the context) is twice as slow as measured
  CHECK(budget.cost_ms(1) == Approx(2.0));
  CHECK(budget.cost_ms(4) == Approx(3.2));
  for (int i = 0; i < 200; ++i) budget.observe_cost(4, 10.0);  // and 4-token verifies dearer still
  CHECK(budget.cost_ms(4) == Approx(10.0).epsilon(0.01));
  CHECK(budget.cost_ms(6) == Approx(10.0).epsilon(0.01));  // the scaled curve's 4.0, but never below t(4)
  CHECK(budget.cost_ms(8) == Approx(10.0).epsilon(0.01));  // ...nor its 4.8
  CHECK(budget.cost_ms(2) == Approx(2.4));  // a size below the dear one still follows t(1)
  budget.reset();  // a new request keeps what was learned about costs
  CHECK(budget.cost_ms(4) == Approx(10.0).epsilon(0.01));
}

TEST_CASE("the drafter's cost per node is learned per class, across requests") {
  DraftBudgetOptions options;
  options.prior_acceptance = 0.8;
  options.draft_ms_per_node = 0.0;
  options.probe_interval = 0;  // the probe's one node would hide the decision
  DraftBudget budget(CostCurve({{1, 1.0}, {2, 1.1}, {4, 1.3}, {8, 1.7}}), options);
  CHECK(budget.nodes_for(0, 4) == 4);  // drafting looks free
  budget.observe_draft_cost(0, 4, 8.0);  // ...until class 0 (a draft-model fallback) costs 2 ms a node
  budget.observe_draft_cost(5, 4, 0.004);  // retrieval stays cheap
  CHECK(budget.draft_cost(0) == Approx(2.0));
  budget.reset();
  CHECK(budget.draft_cost(0) == Approx(2.0));
  CHECK(budget.nodes_for(0, 4) == 0);
  CHECK(budget.nodes_for(5, 4) == 4);
}

TEST_CASE("a verify size not seen lately drifts back to the measured curve") {
  DraftBudget budget(CostCurve({{1, 1.0}, {2, 1.2}, {4, 1.6}}));
  budget.observe_cost(1, 1.0);
  budget.observe_cost(2, 12.0);  // one outlier
  CHECK(budget.cost_ms(2) == Approx(12.0));
  for (int i = 0; i < 300; ++i) budget.observe_cost(1, 1.0);
  CHECK(budget.cost_ms(2) == Approx(1.2).epsilon(0.05));
}

TEST_CASE("a class kept off drafts one node every probe_interval steps, so a pessimistic estimate can be corrected") {
  DraftBudgetOptions options;
  options.prior_acceptance = 0.6;
  options.probe_interval = 4;
  DraftBudget budget(CostCurve({{1, 1.0}, {2, 1.5}, {4, 3.0}}), options);
  budget.observe_cost(2, 5.0);  // one 2-token verify on a busy machine: drafting looks dear
  CHECK(budget.rate(1, 0.6) < budget.rate(0, 0.6));
  CHECK(budget.nodes_for(0, 8) == 1);  // not drafted in this request yet: a probe
  budget.observe(0, 1, 0);              // ...rejected
  for (int i = 0; i < 4; ++i) {
    CHECK(budget.nodes_for(0, 8) == 0);
    budget.observe(0, 0, 0);
  }
  CHECK(budget.nodes_for(0, 8) == 1);  // probe_interval steps without drafting
  CHECK(budget.nodes_for(0, 8, 0) == 0);  // ...unless nothing may be drafted
  // The probes' verify times bring t(2) back: drafting pays again.
  for (int i = 0; i < 40; ++i) budget.observe_cost(2, 1.5);
  budget.observe(0, 1, 1);
  CHECK(budget.nodes_for(0, 8) >= 1);
}

TEST_CASE("a class whose drafts are dear (a draft model) is not probed") {
  DraftBudgetOptions options;
  options.prior_acceptance = 0.6;
  options.probe_interval = 4;
  options.draft_ms_per_node = 0.5;  // half a one-token step per node
  DraftBudget budget(CostCurve({{1, 1.0}, {2, 1.5}, {4, 3.0}}), options);
  CHECK(budget.nodes_for(0, 8) == 0);
  budget.observe_draft_cost(7, 1, 0.001);  // a retrieval class
  CHECK(budget.nodes_for(7, 8) == 1);
}

namespace {
// A draft model that accepts well and costs a tenth of a target step a token, whose catch-up of
// 300 rows costs ~14.5 ms.
DraftBudget catch_up_budget() {
  DraftBudgetOptions options;
  options.prior_acceptance = 0.8;
  options.probe_interval = 0;
  options.draft_ms_per_node = 0.1;
  options.draft_cost = CostCurve({{1, 0.1}, {64, 3.2}});
  return DraftBudget(CostCurve({{1, 1.0}, {2, 1.02}, {8, 1.2}}), options);
}
}  // namespace

TEST_CASE("a draft model behind the text drafts once the gains it forwent would have paid its catch-up") {
  DraftBudget budget = catch_up_budget();
  const int32_t steady = budget.nodes_for(0, 6);
  REQUIRE(steady > 0);
  // Drafted last step (the root and one token to feed): at once.
  CHECK(budget.model_nodes(6, 6, 2, 500) == steady);
  // 300 tokens behind: not at once, then once the forgone gains add up to the price.
  int32_t steps = 0;
  while (budget.model_nodes(6, 6, 301, 500) == 0 && steps < 100) ++steps;
  CHECK(steps >= 2);
  CHECK(steps < 100);
  // Never with too few tokens left to repay it, however long it has waited.
  for (int i = 0; i < 50; ++i) CHECK(budget.model_nodes(6, 6, 301, 4) == 0);
  // No catch-up to run (a drafter without a draft model): nodes_for's answer.
  CHECK(budget.model_nodes(6, 6, 0, 4) == steady);
}

TEST_CASE("a stream whose drafting has stayed worth it step after step pays a catch-up at once") {
  DraftBudget budget = catch_up_budget();
  const int32_t steady = budget.nodes_for(0, 6);
  REQUIRE(steady > 0);
  // A request drafted every step (specd generate's and bench's single stream), then the next
  // request's prompt to catch up with: its answer repays it, and drafting has stayed worth it.
  for (int i = 0; i < 200; ++i) REQUIRE(budget.model_nodes(6, 6, 2, 500) == steady);
  budget.reset();
  CHECK(budget.model_nodes(6, 6, 301, 500) == steady);
  // Not where the tokens left cannot repay it.
  CHECK(budget.model_nodes(6, 6, 301, 4) == 0);
}

namespace {
DraftingRuns runs_alternating(int steps) {
  DraftingRuns runs;
  for (int i = 0; i < steps; ++i) runs.step(i % 2 == 0);
  return runs;
}
}  // namespace

TEST_CASE("drafting runs: a stretch worth drafting is expected to last as long as the past ones did") {
  DraftingRuns always, never;
  CHECK(always.expected_steps() == Approx(2.0));  // the prior: one in two
  for (int i = 0; i < 2000; ++i) always.step(true);
  CHECK(always.expected_steps() > 100);
  for (int i = 0; i < 2000; ++i) never.step(false);
  CHECK(never.expected_steps() == Approx(2.0));  // nothing worth drafting was ever followed
  // Worth it every other step: no stretch lasts.
  CHECK(runs_alternating(2000).expected_steps() < 1.05);
}

TEST_CASE("acceptance in runs: a draft wrong at once or right for long is drafted long") {
  DraftBudgetOptions options;
  options.prior_acceptance = 0.5;
  // A 2-token verify costs 1.35 one-token steps; each further token 0.2 more.
  DraftBudget budget(CostCurve({{1, 1.0}, {2, 1.35}, {8, 2.55}}), options);
  for (int i = 0; i < 40; ++i) {
    budget.observe(0, 6, i % 5 < 3 ? 0 : 6);  // 3 of 5 drafts rejected at once, the others kept whole
    budget.observe(1, 6, 3);                  // class 1: every draft kept for 3 tokens, then cut
  }
  const Acceptance runs = budget.acceptance(0);
  CHECK(runs.first == Approx(0.4).margin(0.1));  // recent steps weigh more
  CHECK(runs.next > 0.9);
  // One geometric rate (0.4 per token) would draft a single token: it returns 1.4 tokens for 1.35
  // steps, and longer drafts less per step.
  CHECK(budget.rate(1, 0.4) > budget.rate(0, 0.4));
  CHECK(budget.rate(6, 0.4) < budget.rate(1, 0.4));
  CHECK(budget.nodes_for(0, 6) == 6);
  const Acceptance cut = budget.acceptance(1);
  CHECK(cut.first > 0.9);
  CHECK(cut.next == Approx(2.0 / 3.0).margin(0.05));
}
