// A server's requests start their draft budgets from what their method's last requests accepted.
#include <catch2/catch.hpp>

#include "serve/acceptance_history.h"
#include "speculative/draft_budget.h"

using specd::Acceptance;
using specd::DraftBudget;
using specd::serve::AcceptanceHistory;

TEST_CASE("a method's start is the evidence-weighted acceptance of its last requests", "[serve][acceptance]") {
  AcceptanceHistory history;
  CHECK_FALSE(history.start("sd").has_value());
  history.finished("sd", Acceptance{0.5, 0.4}, 0);  // drafted nothing: no evidence
  CHECK_FALSE(history.start("sd").has_value());
  history.finished("sd", Acceptance{0.8, 0.7}, 10);
  REQUIRE(history.start("sd").has_value());
  CHECK(history.start("sd")->first == Approx(0.8));
  CHECK(history.start("sd")->next == Approx(0.7));
  // A later request with twice the evidence: (0.9 * 10 * 0.8 + 20 * 0.5) / (0.9 * 10 + 20).
  history.finished("sd", Acceptance{0.5, 0.5}, 20);
  CHECK(history.start("sd")->first == Approx((9 * 0.8 + 20 * 0.5) / 29));
  CHECK(history.start("sd")->next == Approx((9 * 0.7 + 20 * 0.5) / 29));
  CHECK_FALSE(history.start("csd").has_value());  // per method
}

TEST_CASE("a draft budget's prior is where its estimates start, and evidence moves them from it", "[serve][acceptance]") {
  DraftBudget budget(specd::CostCurve({{1, 2.0}, {8, 2.6}}));
  CHECK(budget.acceptance().first == Approx(0.6));  // DraftBudgetOptions::prior_acceptance
  CHECK(budget.evidence() == 0);
  budget.set_prior(Acceptance{0.9, 0.8});
  CHECK(budget.acceptance().first == Approx(0.9));
  CHECK(budget.acceptance().next == Approx(0.8));
  // One chain of 4 levels, 2 accepted: the first level tried and kept, the second kept, the third
  // rejected; worth prior_weight (2) tokens against them.
  budget.observe(4, 2);
  CHECK(budget.evidence() == Approx(1.0));
  CHECK(budget.acceptance().first == Approx((1 + 2 * 0.9) / (1 + 2)));
  CHECK(budget.acceptance().next == Approx((1 + 2 * 0.8) / (2 + 2)));
  CHECK_THROWS(budget.set_prior(Acceptance{1.0, 0.5}));
  CHECK_THROWS(budget.set_prior(Acceptance{0.5, 0.0}));
}
