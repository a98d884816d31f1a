#pragma once
// How far the draft-model chains of a batched step draft (sd, csd and their ablations), chosen
// for the batch's throughput as SmartSpec does (Liu et al. 2024, "Optimizing Speculative Decoding
// for Serving Large Language Models Using Goodput"): a step's time is fitted online from every
// decoding step the server runs, one fit for the target (the whole step but its drafting) and one
// for the draft model's forwards. Not as a line in the rows, as SmartSpec's GPU batches allow: on
// a CPU the first extra rows ride on the weight reads nearly free and later ones cost their
// compute (the large demo target on a Xeon: 2, 3 and 4 rows cost 1.02, 1.14 and 1.32 of one), so
// each fit is ms = a + b * curve(rows), the curve measured at start-up giving the shape and the
// server's steps a and b (its per-step work besides the forward, a busier machine), and a step of
// n requests is priced at the level of the steps of n requests (GroupLevels, below). For each draft
// length k the planner adds up the tokens the chains are expected to commit (each request's own
// acceptance estimates) and the other requests', over the step's time (the target's forward of
// every row, and k levels of the draft model's forwards), and picks the k with the most tokens per
// millisecond: 0 when drafting does not pay at this batch, however well the draft agrees.
//
// Two guards keep speculation from making a loaded server slower than plain decoding:
// - The fits start from the measured curves as a prior worth a few steps, so the planner decides
//   from the first step (not each request's own budget against a batch it cannot price), and
//   the server's own steps outweigh it within tens of steps; the prior keeps a fit defined when
//   the steps run one row count only (one client decoding plainly).
// - The draft length is chosen for chains that drafted last step (their draft model's first
//   forward runs the root and a token or two). A chain that did not has a catch-up to run first
//   (the prompt on its first draft, then the tokens of the steps it did not draft): a price paid
//   once to switch drafting on, worth it only if drafting stays worth it for long enough, which
//   nothing can know (the batch changes as requests come and go). So it switches on as in ski
//   rental (Karlin et al. 1988): once the gains it has forgone while drafting would have paid
//   add up to the catch-up's price, and only if its tokens left can repay that price; never
//   paying more than twice what knowing the future would, and never switching on for a batch that
//   changes before it would pay (a moment alone between two others' requests). Where the server's
//   own history says drafting, once worth it, stays worth it for long (the share of such steps
//   followed by another), a chain switches on as soon as the gain expected over that stretch
//   repays the catch-up: otherwise a new request waited out the ski rental on its prompt's
//   catch-up, on every request, at a load where drafting always paid.
//
// Two fits of the target's part of a step: one from the planner's steps in which a draft model
// ran, one from steps in which none did (of any request or arm, 32 forwards or more after the last
// draft model: the steps in between are neither's cost). On a host whose shared cache drops the
// target's weights while the target pauses (the Xeon kind), a draft model's turn leaves the
// target's next forwards slower, by more than its own time and for tens of forwards
// (drafting_guard.h): a cost of drafting at all, whatever its length. With one fit for both, 4
// clients of sd on the Xeon fitted 4.84 ms + 0.14 a row (a line through their plain 4-row steps
// and their 7.9-row drafting ones, whose forwards took 5.98 ms): a plain step priced at 5.4 ms took
// 4.1, and the planner drafted where plain decoding delivered 5% more. A step with no draft model
// (plain, retrieval, the requests' own budgets) is priced by the plain fit once it has seen
// kWarmUp steps.
//
// No margin is asked of a draft beyond the fits' prediction: one step's time scatters by a third
// around them here (the kernels' spin pool shares two cores with the HTTP threads and clients),
// but a draft length is chosen for many steps, so the fits' mean is what decides.
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "speculative/draft_budget.h"

namespace specd::serve {

// ms = a + b * x, least squares over every observation with older ones fading, plus a prior
// that does not fade.
class LinearCost {
 public:
  void observe(double x, double ms);
  // (x, ms) points worth `weight` observations in all, kept at that weight.
  void set_prior(const std::vector<std::pair<double, double>>& points, double weight);
  bool ready() const;  // a prior, or enough observations, spread over more than one x
  int64_t observations() const { return n_; }
  double at(double x) const { return intercept() + slope() * x; }
  double intercept() const;
  double slope() const;

 private:
  struct Sums {
    double w = 0, x = 0, xx = 0, y = 0, xy = 0;
    void add(double weight, double px, double py);
  };
  Sums total() const;  // the observations' decayed sums and the prior's
  Sums seen_, prior_;
  int64_t n_ = 0;
};

// A fit's line moved to one group's level: the slope fitted on every observation, the intercept
// from the group's own observations (decayed as the fit's), weighed against the fit's intercept as
// kPrior observations. The planner's groups are request counts: the same rows cost more spread
// over more requests (attention and KV work per request; after a draft model's turn, a bigger
// forward waits longer for the weights), and where the load changes between batch sizes the lines
// follow the last ones. The load generator's phases on the Xeon before the levels (step log
// columns: what the planner expected; reports/bench/serve-planner-levels-xeon.txt): one sd
// request's plain step expected at 3.78 ms took 2.27 and its drafted one 7.96 took 6.33; four csd
// requests' plain step 5.14 took 6.20. With them, 0.92-1.09x at 1, 2, 4 and 8 requests.
class GroupLevels {
 public:
  void observe(int32_t group, double x, double ms);
  double at(const LinearCost& line, int32_t group, double x) const;

 private:
  struct Sums {
    double w = 0, x = 0, y = 0;
  };
  std::map<int32_t, Sums> groups_;
};

// A decayed mean per group (faded as the fits), shrunk toward 0 as if kPrior observations of 0
// came first. The planner's groups are request counts and the values what its drafted steps took
// beyond their price: the fits price each chain's draft-model forward at one row, where its
// catch-up runs more, and the levels spread one slope over every batch size. On the AVX512-BF16
// AMD EPYC, eight sd requests' drafted steps were priced at 7.50 ms and took 8.43 (15.1 tokens: 1.79
// a ms, where their plain steps delivered 1.90), so the planner drafted at 8 clients where it lost
// (reports/bench/serve-planner-surprise-epyc.txt).
class GroupMeans {
 public:
  void observe(int32_t group, double value);
  double at(int32_t group) const;

 private:
  std::map<int32_t, std::pair<double, double>> groups_;  // decayed weight and sum
};

class BatchPlanner {
 public:
  // A draft-model chain of the step: its acceptance estimates, its longest draft, and the
  // tokens its draft model must catch up with before drafting (the last step's commits).
  struct Chain {
    Acceptance acceptance;
    int32_t max_nodes = 0;
    int64_t catch_up_rows = 1;       // its draft model's first forward (SpeculativeSession::first_draft_rows)
    int64_t remaining_tokens = 1;    // the most tokens its request may still emit
    double forgone_ms = 0;           // the last decision's, for this chain
  };
  // A chain's draft length this step, and the gains it has forgone while drafting would have paid
  // (its switch-on account: the next step's Chain::forgone_ms).
  struct Decision {
    int32_t length = 0;
    double forgone_ms = 0;
  };
  // The step's other rows (prefills, other methods' trees), the tokens they are expected to
  // commit and their drafting time: what the chains share the step with.
  struct Fixed {
    int32_t rows = 0;
    double tokens = 0;
    double draft_ms = 0;
    int32_t requests = 0;
  };

  // What the last choose() expected of the step it planned and of the same step undrafted, for
  // the step log (`specd serve --step-log`): what the fits predicted beside what the step took.
  // All 0 where it did not size the chains (the fits not ready yet).
  struct Prediction {
    double tokens = 0, ms = 0;              // the step as planned: expected commits, drafting and forward
    double plain_tokens = 0, plain_ms = 0;  // no chain drafting
  };

  // Every chain's draft length this step (each capped by its own max_nodes), or none while the
  // fits have too little to go on (each request's own budget decides then).
  std::vector<Decision> choose(const std::vector<Chain>& chains, const Fixed& fixed);
  const Prediction& prediction() const { return prediction_; }
  // `load` priced by the plain steps' fit (BatchLoad::fixed_ms, scale, shape) once it is ready,
  // for the budgets of the requests the planner does not size (retrieval, trees, fallbacks).
  BatchLoad priced(BatchLoad load) const;
  // A decoding step's time but its drafting: one the planner planned in which a draft model ran,
  // and one in which none ran (nor in the 32 forwards before it), planned or not. `requests` (the
  // step's) prices steps of as many requests; 0 adds to the lines only.
  void observe_target(int32_t rows, double ms, int32_t requests = 0);
  void observe_plain(int32_t rows, double ms, int32_t requests = 0);
  void observe_draft(int32_t rows, double ms) { draft_.observe(draft_x(rows), ms); }
  // The whole time (drafting and forward) of a step of `requests` requests that the last choose()
  // planned with drafting: its surprise against the price adds to drafted steps of as many.
  void observe_drafted(int32_t requests, double ms);
  // The curves measured at start-up: the fits' shapes, and their prior over the rows a batch
  // may have. Without them, the fits are lines in the rows with no prior.
  void seed(const CostCurve& target, const CostCurve& draft, int32_t max_rows);

 private:
  // A step's expected committed tokens and its time, with the chains marked in `drafting`
  // drafting k (each capped by its max_nodes), their draft model's first forward their root alone.
  struct Step {
    double tokens = 0, ms = 0;
    double surprise_ms = 0;  // the part of ms that is surprise_'s, not the fits' price
    double rate() const { return tokens / ms; }
  };
  Step evaluate(const std::vector<Chain>& chains, const Fixed& fixed, int32_t k, const std::vector<bool>& drafting) const;
  // The fit that prices a step's target forward: drafting steps', or plain steps' once it has
  // seen kWarmUp of them.
  const LinearCost& fit(bool draft_model) const;
  // That fit's price of a step's target forward of `rows` over `requests` requests, at their level
  // once the plain fit is the one pricing plain steps.
  double target_ms(bool draft_model, int32_t requests, int32_t rows) const;
  double target_x(int32_t rows) const { return target_shape_.empty() ? rows : target_shape_.at(rows); }
  double draft_x(int32_t rows) const { return draft_shape_.empty() ? rows : draft_shape_.at(rows); }

  CostCurve target_shape_, draft_shape_;
  LinearCost target_, plain_, draft_;
  GroupLevels target_levels_, plain_levels_;
  GroupMeans surprise_;
  double priced_ms_ = 0;  // the last choose()'s price of its drafted plan, before surprise_; 0: none
  DraftingRuns runs_;  // how long drafting, once worth it, stays so (a length above 0 at the steady state)
  Prediction prediction_;
};

}  // namespace specd::serve
