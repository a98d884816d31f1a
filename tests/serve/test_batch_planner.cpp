// The batch planner: its cost lines are least-squares fits, and it drafts where extra rows are
// nearly free (a memory-bound target) and not where each row costs what a token is worth.
#include <catch2/catch.hpp>

#include "serve/batch_planner.h"

using specd::Acceptance;
using specd::serve::BatchPlanner;
using specd::serve::LinearCost;

TEST_CASE("a cost line fitted to exact observations is that line", "[serve][planner]") {
  LinearCost cost;
  CHECK_FALSE(cost.ready());
  for (int i = 0; i < 64; ++i) cost.observe(1 + i % 16, 3.0 + 0.25 * (1 + i % 16));
  REQUIRE(cost.ready());
  CHECK(cost.at(0) == Approx(3.0));
  CHECK(cost.at(40) == Approx(13.0));
  LinearCost flat;  // one row count only: no slope to fit
  for (int i = 0; i < 64; ++i) flat.observe(8, 5.0);
  CHECK_FALSE(flat.ready());
}

TEST_CASE("the planner drafts when rows are cheap and not when they cost a token's worth", "[serve][planner]") {
  const std::vector<BatchPlanner::Chain> chains(8, BatchPlanner::Chain{Acceptance{0.8, 0.8}, 6, 2});
  BatchPlanner memory_bound, compute_bound;
  CHECK(memory_bound.choose(chains, {}) == -1);  // nothing observed yet: the requests' budgets decide
  for (int i = 0; i < 64; ++i) {
    const int rows = 4 + i % 40;
    memory_bound.observe_target(rows, 4.0 + 0.02 * rows);  // reading the weights dominates
    memory_bound.observe_draft(rows, 0.1 + 0.005 * rows);
    compute_bound.observe_target(rows, 0.1 + 1.0 * rows);  // every row costs a full step
    compute_bound.observe_draft(rows, 0.1 + 0.2 * rows);
  }
  CHECK(memory_bound.choose(chains, {}) >= 4);
  CHECK(compute_bound.choose(chains, {}) == 0);
  // A poor draft does not pay even on a memory-bound target.
  const std::vector<BatchPlanner::Chain> poor(8, BatchPlanner::Chain{Acceptance{0.02, 0.02}, 6, 2});
  CHECK(memory_bound.choose(poor, {}) == 0);
}
