// The batch planner: its cost lines are least-squares fits, and it drafts where extra rows are
// nearly free (a memory-bound target) and not where each row costs what a token is worth.
#include <catch2/catch.hpp>

#include <tuple>

#include "serve/batch_planner.h"

using specd::Acceptance;
using specd::serve::BatchPlanner;
using specd::serve::LinearCost;

namespace {

// The first chain's draft length (the planner drafts every chain that drafted last step alike).
int32_t length(const std::vector<BatchPlanner::Decision>& decisions) {
  REQUIRE(!decisions.empty());
  return decisions.front().length;
}

// A planner that has seen a memory-bound target (a row 0.02 ms over 4) and a draft model whose
// rows cost their compute (0.05 ms each).
BatchPlanner cheap_rows() {
  BatchPlanner planner;
  for (int i = 0; i < 64; ++i) {
    const int rows = 1 + i % 40;
    planner.observe_target(rows, 4.0 + 0.02 * rows);
    planner.observe_draft(rows, 0.1 + 0.05 * rows);
  }
  return planner;
}

}  // namespace

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
  const std::vector<BatchPlanner::Chain> chains(8, BatchPlanner::Chain{Acceptance{0.8, 0.8}, 6, 2, 100});
  BatchPlanner memory_bound, compute_bound;
  CHECK(memory_bound.choose(chains, {}).empty());  // nothing observed yet: the requests' budgets decide
  for (int i = 0; i < 64; ++i) {
    const int rows = 4 + i % 40;
    memory_bound.observe_target(rows, 4.0 + 0.02 * rows);  // reading the weights dominates
    memory_bound.observe_draft(rows, 0.1 + 0.005 * rows);
    compute_bound.observe_target(rows, 0.1 + 1.0 * rows);  // every row costs a full step
    compute_bound.observe_draft(rows, 0.1 + 0.2 * rows);
  }
  CHECK(length(memory_bound.choose(chains, {})) >= 4);
  CHECK(length(compute_bound.choose(chains, {})) == 0);
  // A poor draft does not pay even on a memory-bound target.
  const std::vector<BatchPlanner::Chain> poor(8, BatchPlanner::Chain{Acceptance{0.02, 0.02}, 6, 2, 100});
  CHECK(length(memory_bound.choose(poor, {})) == 0);
}

TEST_CASE("a fit with a prior is defined from the start and stays defined at one row count", "[serve][planner]") {
  LinearCost line;
  line.set_prior({{1, 4.02}, {16, 4.32}}, 8);
  REQUIRE(line.ready());
  CHECK(line.at(0) == Approx(4.0));
  for (int i = 0; i < 2000; ++i) line.observe(1, 5.02);  // one client decoding plainly, slower than measured
  REQUIRE(line.ready());
  CHECK(line.at(1) == Approx(5.02).epsilon(0.02));
  LinearCost single;  // one point: no slope to start from
  single.set_prior({{1, 4.0}}, 8);
  CHECK_FALSE(single.ready());
}

TEST_CASE("seeded with measured curves, the planner decides from the first step on their shape", "[serve][planner]") {
  // The large demo target on a Xeon: a second row rides on the weight reads, later rows cost 0.65 ms.
  const specd::CostCurve target({{1, 2.23}, {2, 2.28}, {3, 2.54}, {4, 2.95}, {6, 4.16}, {8, 5.59}, {16, 10.75}, {32, 20.68}});
  const specd::CostCurve draft({{1, 0.6}, {2, 0.62}, {4, 0.8}, {8, 1.2}, {32, 3.0}});
  BatchPlanner planner;
  planner.seed(target, draft, 40);
  const Acceptance good{0.8, 0.8};
  // Alone: one drafted token costs 0.05 ms of target and a draft step, and brings 0.8 tokens.
  CHECK(length(planner.choose({BatchPlanner::Chain{good, 4, 2, 100}}, {})) >= 1);
  // Eight requests: every extra row costs its compute, a third of a plain step's share.
  CHECK(length(planner.choose(std::vector<BatchPlanner::Chain>(8, BatchPlanner::Chain{good, 4, 2, 100}), {})) == 0);
  const specd::BatchLoad priced = planner.priced({});
  REQUIRE(priced.shape != nullptr);
  CHECK(priced.step_ms(2) == Approx(2.28).epsilon(1e-6));
}

TEST_CASE("a chain behind the text switches drafting on once the gains it forwent would have paid its catch-up", "[serve][planner]") {
  BatchPlanner planner = cheap_rows();
  const Acceptance good{0.8, 0.8}, poor{0.02, 0.02};
  // Drafted last step (its draft model two rows behind): drafts at once.
  CHECK(length(planner.choose({BatchPlanner::Chain{good, 6, 2, 500}}, {})) > 0);
  // A history where drafting, once worth it, never stayed so: the next step is all it expects.
  for (int i = 0; i < 400; ++i) planner.choose({BatchPlanner::Chain{i % 2 ? good : poor, 6, 2, 500}}, {});
  // 1,000 tokens of prompt to catch up with (50 ms of draft model, a dozen plain steps): worth
  // paying over a long answer once drafting has stayed worth it long enough, never over its last
  // tokens.
  BatchPlanner::Chain behind{good, 6, 1000, 500};
  int32_t steps = 0;
  for (; steps < 100; ++steps) {
    const BatchPlanner::Decision d = planner.choose({behind}, {}).front();
    if (d.length > 0) break;
    CHECK(d.forgone_ms > behind.forgone_ms);
    behind.forgone_ms = d.forgone_ms;
  }
  CHECK(steps >= 2);
  CHECK(steps < 100);
  CHECK(behind.forgone_ms >= 50.0 * 0.5);  // it had forgone about the price before paying it
  BatchPlanner::Chain ending{good, 6, 1000, 3};
  ending.forgone_ms = 1000;
  CHECK(length(planner.choose({ending}, {})) == 0);
  // When drafting stops paying (a compute-bound batch), the account starts again.
  BatchPlanner costly;
  for (int i = 0; i < 64; ++i) {
    const int rows = 1 + i % 40;
    costly.observe_target(rows, 0.1 + 1.0 * rows);
    costly.observe_draft(rows, 0.1 + 0.2 * rows);
  }
  CHECK(costly.choose({behind}, {}).front().forgone_ms == 0);
}

TEST_CASE("where drafting has long stayed worth it, a chain behind the text switches on at once if its answer repays the catch-up", "[serve][planner]") {
  BatchPlanner planner = cheap_rows();
  const Acceptance good{0.8, 0.8};
  for (int i = 0; i < 400; ++i) planner.choose({BatchPlanner::Chain{good, 6, 2, 500}}, {});
  CHECK(length(planner.choose({BatchPlanner::Chain{good, 6, 1000, 500}}, {})) > 0);
  CHECK(length(planner.choose({BatchPlanner::Chain{good, 6, 1000, 3}}, {})) == 0);  // not over its last tokens
}

TEST_CASE("a plain step is priced by steps without a draft model, drafting by steps with one", "[serve][planner]") {
  // The large demo target on a Xeon (after the widened BF16 tiles), and 4 clients of sd there:
  // drafting steps of 8 rows whose target part took 5.6 ms (its forwards slowed by the draft
  // model's turn before them) and 1.0 ms of draft model, 4 plain rows 3.3 ms.
  const specd::CostCurve target({{1, 2.13}, {2, 2.26}, {3, 2.6}, {4, 2.94}, {6, 3.5}, {8, 4.05}, {16, 7.0}, {32, 13.0}});
  const specd::CostCurve draft({{1, 0.6}, {2, 0.62}, {4, 0.8}, {8, 1.2}, {32, 3.0}});
  BatchPlanner planner;
  planner.seed(target, draft, 40);
  for (int i = 0; i < 200; ++i) {
    planner.observe_target(8, 5.6);
    planner.observe_draft(4, 1.0);
  }
  const Acceptance good{0.85, 0.85};
  const std::vector<BatchPlanner::Chain> four(4, BatchPlanner::Chain{good, 4, 2, 100});
  // Priced by the drafting steps' line alone (the curve's slope through them), 4 plain rows
  // would cost 4.5 ms: drafting (one token each: 7.4 tokens in 6.6 ms) looks the better.
  CHECK(length(planner.choose(four, {})) >= 1);
  for (int i = 0; i < 31; ++i) planner.observe_plain(4, 3.3);
  CHECK(length(planner.choose(four, {})) >= 1);  // too few plain steps to go on yet
  planner.observe_plain(4, 3.3);
  CHECK(length(planner.choose(four, {})) == 0);  // 4 tokens in 3.3 ms
  // One client still drafts: the pause costs it less than its drafts bring.
  CHECK(length(planner.choose({BatchPlanner::Chain{good, 4, 2, 100}}, {})) >= 2);
  // The requests' own budgets are priced by the plain steps too (the curve's prior, worth 8 steps,
  // pulls the line a little).
  CHECK(planner.priced({}).step_ms(4) == Approx(3.3).epsilon(0.03));
}

TEST_CASE("a step is priced at the level of its request count, which the other batch sizes do not move", "[serve][planner]") {
  // The large demo target on the Xeon with AMX tiles, sd and csd in `specd serve --step-log`
  // (docs/serving.md, Load): alone its rows are nearly free (16 rows 3.5 ms), but spread over
  // requests and after the draft model's turn they are not. Drafted steps' target part: 1 request
  // of 3-5 rows 3.9-4.6 ms, 2 requests of 6 rows 4.5, 4 of 8 rows 5.5, 8 of 16 rows 10.3; plain
  // steps of 1, 2, 4 and 8 requests 2.3, 2.75, 3.5 and 5.5 ms.
  const specd::CostCurve target({{1, 2.0}, {2, 2.05}, {4, 2.19}, {8, 2.59}, {16, 3.53}, {32, 5.6}, {64, 9.8}});
  const specd::CostCurve draft({{1, 0.6}, {2, 0.7}, {4, 1.0}, {8, 2.35}, {32, 6.0}});
  struct Phase {
    int32_t requests;
    std::vector<std::pair<int32_t, double>> drafted;  // rows, ms
    double plain_ms;
  };
  const Phase eight{8, {{16, 10.3}}, 5.5};
  const Phase others[] = {{1, {{3, 3.9}, {4, 4.6}, {5, 4.3}}, 2.3}, {2, {{6, 4.5}}, 2.75}, {4, {{8, 5.5}}, 3.5}};
  auto run = [&](BatchPlanner& planner, const Phase& p, bool levels) {
    for (int i = 0; i < 150; ++i) {
      const auto& [rows, ms] = p.drafted[static_cast<size_t>(i) % p.drafted.size()];
      planner.observe_target(rows, ms, levels ? p.requests : 0);
      planner.observe_draft(p.requests, draft.at(p.requests));
      planner.observe_plain(p.requests, p.plain_ms, levels ? p.requests : 0);
    }
  };
  // Phases as the load generator runs them: 8 clients, then 1, 2 and 4 before 8 return.
  BatchPlanner leveled, pooled;
  for (BatchPlanner* planner : {&leveled, &pooled}) {
    planner->seed(target, draft, 72);
    run(*planner, eight, planner == &leveled);
    for (const Phase& p : others) run(*planner, p, planner == &leveled);
  }
  const Acceptance good{0.9, 0.9};
  const std::vector<BatchPlanner::Chain> eight_chains(8, BatchPlanner::Chain{good, 4, 2, 100});
  // One token each: 15.2 tokens in 12.65 ms against 8 in 5.5 plainly.
  CHECK(length(leveled.choose(eight_chains, {})) == 0);
  CHECK(leveled.prediction().plain_ms == Approx(5.5).epsilon(0.05));
  // The lines through every batch size's steps miss the eight requests' level: their plain step
  // priced at 3.7 ms.
  pooled.choose(eight_chains, {});
  CHECK(pooled.prediction().plain_ms < 0.8 * 5.5);
  // Two requests still draft at their level: 3.8 tokens in 5.2 ms against 2 in 2.75.
  const std::vector<BatchPlanner::Chain> two_chains(2, BatchPlanner::Chain{good, 4, 2, 100});
  CHECK(length(leveled.choose(two_chains, {})) >= 1);
}

TEST_CASE("drafted steps that take longer than priced stop drafting at their batch size, not at the others", "[serve][planner]") {
  // The large demo target on the AVX512-BF16 EPYC (reports/bench/serve-steps-epyc-avx512.txt):
  // eight sd requests' drafted steps were priced 0.9 ms under what they took, where drafting
  // gained less than that over their plain steps.
  const specd::CostCurve target({{1, 2.0}, {2, 2.05}, {4, 2.19}, {8, 2.59}, {16, 3.53}, {32, 5.6}, {64, 9.8}});
  const specd::CostCurve draft({{1, 0.6}, {2, 0.7}, {4, 1.0}, {8, 2.35}, {32, 6.0}});
  BatchPlanner planner;
  planner.seed(target, draft, 72);
  for (int i = 0; i < 150; ++i)
    for (const auto& [requests, drafted_ms, plain_ms] : {std::tuple{8, 7.0, 5.5}, std::tuple{2, 4.5, 2.75}}) {
      planner.observe_target(2 * requests, drafted_ms, requests);
      planner.observe_draft(requests, draft.at(requests));
      planner.observe_plain(requests, plain_ms, requests);
    }
  const Acceptance good{0.9, 0.9};
  const std::vector<BatchPlanner::Chain> eight(8, BatchPlanner::Chain{good, 4, 2, 100}), two(2, BatchPlanner::Chain{good, 4, 2, 100});
  REQUIRE(length(planner.choose(eight, {})) >= 1);
  // Each drafted step takes 2 ms more than priced; the price moves toward it and drafting stops.
  int drafted = 0;
  for (int i = 0; i < 100; ++i) {
    const auto decisions = planner.choose(eight, {});
    if (length(decisions) == 0) break;
    ++drafted;
    planner.observe_drafted(8, planner.prediction().ms + 2.0);
  }
  CHECK(drafted >= 2);
  CHECK(length(planner.choose(eight, {})) == 0);
  // Two requests' steps took what they were priced: they still draft, at the same price as before.
  REQUIRE(length(planner.choose(two, {})) >= 1);
  planner.observe_drafted(2, planner.prediction().ms);
  CHECK(length(planner.choose(two, {})) >= 1);
  // A step the planner did not plan with drafting teaches nothing.
  REQUIRE(length(planner.choose(eight, {})) == 0);
  planner.observe_drafted(2, 100.0);
  CHECK(length(planner.choose(two, {})) >= 1);
}
