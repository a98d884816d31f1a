#pragma once
// Cost-aware draft length. On a CPU the target's forward of n tokens costs a real fraction of n
// one-token forwards (the demo target inside a decoding loop: n=2 ~1.3x, n=9 ~4x), so a draft
// pays only when enough of it is accepted. Each step, DraftBudget picks the number of drafted
// nodes k that maximises expected committed tokens per millisecond,
//     (1 + a1 * (1 + a2 + ... + a2^(min(k, depth) - 1))) / (t(k + 1) + k * c),
// where t(n) is the target's cost of verifying n tokens, c the drafter's cost per drafted node,
// a1 the chance that a draft's first token is accepted and a2 the chance that a later one is,
// given the one before it was. k = 0 is a plain AR step. Two rates, because acceptance comes in
// runs: a copied span is either wrong at once or right for a while (PLD on this pair: a1 ~0.4,
// while 3-token drafts keep ~70% of their tokens), and one geometric rate would cut the drafts
// that pay most.
//
// - t(n) starts as the curve measured at load, then follows the run's own verify times (a
//   running mean per n; sizes not verified yet, or not lately, are the measured curve scaled by
//   the observed one-token cost), so it tracks the context length and the machine's load.
// - c starts at the option's value (a draft model's measured step, 0 for retrieval) and is
//   learned per proposal class from the run's drafting times.
// - a1 and a2 are learned per request and per proposal class (Drafter::proposal_class: PLD's
//   matched n-gram length, SAM's match length or its fallback), as accepted / tried with decayed
//   counts and a prior; they drift back to the prior while a class is not drafted, so a class
//   that stopped paying is tried again later. A class's prior is what it showed in the requests
//   before this one (their counts, folded in at reset() and forgotten a little each request),
//   shrunk to the options' prior: drifting back to a fixed 0.6, PLD at T = 1 on the large pair
//   (a1 ~0.03) drafted again after every pause and at the start of every request, and ran at
//   0.97x AR. A server's budgets see one request each (serve/acceptance_history.h keeps its
//   methods' histories instead).
//
// - A cheap class (drafting a node costs under a tenth of a one-token step: retrieval) that the
//   budget has kept off for probe_interval steps, or not seen yet in this request, drafts one
//   node anyway: without it, one pessimistic estimate (a verify time taken while the machine was
//   busy, a few unlucky rejections) would keep drafting off for good, since only drafting can
//   correct it. A draft model is not probed: its first draft would also have to catch its cache
//   up with the text, which can cost more than the whole request gains.
//
// A retrieval drafter knows its class (the match) before drafting and asks
// (DraftRequest::nodes_for); for other drafters (one class) the engine limits class 0 before
// proposing.
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

namespace specd {

// Milliseconds of one target forward of n tokens, measured at a few n and interpolated linearly
// between them (extrapolated from the last two beyond the largest). Never decreasing in n: a
// point below an earlier one is raised to it.
class CostCurve {
 public:
  CostCurve() = default;
  // (n, ms) pairs, n >= 1 ascending, ms > 0. Throws std::invalid_argument otherwise.
  explicit CostCurve(std::vector<std::pair<int32_t, double>> points);
  double at(int32_t n) const;
  bool empty() const { return points_.empty(); }
  const std::vector<std::pair<int32_t, double>>& points() const { return points_; }

 private:
  std::vector<std::pair<int32_t, double>> points_;
};

// a1: the first drafted token is accepted; a2: a later one is, given its parent was.
struct Acceptance {
  double first = 0, next = 0;
};

// Committed tokens a step drafting k nodes, at most max_depth deep, is expected to give, the
// root's included: 1 + a1 * (1 + a2 + ... + a2^(min(k, depth) - 1)).
double expected_committed(int32_t k, Acceptance a, int32_t max_depth = INT32_MAX);

// Whether a draft model behind the text pays its catch-up (`catch_up_ms`) now, as in ski rental
// (Karlin et al. 1988): drafting saves `gain_ms` a step, `forgone_ms` were forgone while it would
// have paid, `steps_left` steps remain, and drafting is expected to stay worth it for
// `expected_steps` of them (1 without a history of it). It pays once the forgone gains or the
// expected stretch cover the catch-up, never when the steps left cannot repay it.
bool pays_catch_up(double catch_up_ms, double gain_ms, double forgone_ms, double steps_left, double expected_steps = 1);

// How long drafting, once worth it, stays worth it: of the steps worth drafting (a draft length
// above 0 before any catch-up) those followed by another, out of those followed by any step,
// decayed counts with a prior of one in two; pays_catch_up's expected stretch follows from it.
// A single stream (specd generate, bench) that drafts every step learns to pay a catch-up at
// once, where ski rental alone waited out each request's prompt: on the large demo pair sd's
// steps committed 2.44 tokens that way and 3.16 with it (docs/benchmarks.md, Methods against AR).
class DraftingRuns {
 public:
  void step(bool worth);
  double expected_steps() const;  // 1 + p / (1 - p), p the share above (at most 0.999)

 private:
  double stayed_ = 1, followed_ = 2;
  bool worth_ = false;  // the last step's
};

struct DraftBudgetOptions {
  double prior_acceptance = 0.6;  // a1 and a2 before any evidence
  double prior_weight = 2.0;      // ...worth this many observed tokens
  double decay = 0.95;            // evidence kept per step (an effective window of ~20 steps)
  bool history = true;            // each class's prior carries over between requests (reset())
  double cost_weight = 0.1;       // weight of a new verify time in t(n)'s running mean
  double cost_relax = 0.02;       // per step, how far other sizes' t(n) drift back to the curve
  // c before the run shows it, for class 0: a draft model's cost per drafted node. Classes above
  // 0 are retrieval (Drafter::proposal_class) and start at 0.
  double draft_ms_per_node = 0;
  // The draft model's forward cost by rows, which prices its catch-ups (model_nodes); empty:
  // c a row.
  CostCurve draft_cost;
  int32_t probe_interval = 16;    // steps a cheap class may go undrafted before it drafts one node (0: never)
  double probe_max_draft_share = 0.1;  // cheap: c below this share of t(1)
};

// What the other requests of a batched step (a server's, LlamaModel::forward_batch) put in it:
// their rows, the tokens they are expected to commit and their drafting time. With a load, the
// budget maximises the batch's committed tokens per millisecond instead of the request's own,
//     (tokens + E(k)) / (t(rows + k + 1) + draft_ms + k * c),
// so a request drafts only where its extra rows pay at the batch's size: on a memory-bound target
// extra rows in a small batch are nearly free, in a large one they cost what the others commit.
// t is the request's own curve unless the load carries the batch's (a server fits its batched
// steps, rows it seldom sees included, where a request's curve holds only the sizes it verified
// alone). The default (no load) is the single-request rate above.
struct BatchLoad {
  int32_t rows = 0;
  double tokens = 0;
  double draft_ms = 0;
  // The batch's step time when the server has fitted it (fixed_ms >= 0):
  //     t(n) = fixed_ms + scale * x(n),  x(n) = shape->at(n), or n without a shape,
  // the shape being the target's curve measured at start-up (a line in n misprices the first
  // extra rows wherever they ride on the weight reads nearly free).
  double fixed_ms = -1, scale = 0;
  const CostCurve* shape = nullptr;  // the server's, which outlives its requests
  double step_ms(int32_t n) const { return fixed_ms + scale * (shape ? shape->at(n) : static_cast<double>(n)); }
};

class DraftBudget {
 public:
  DraftBudget(CostCurve target_cost, DraftBudgetOptions options = {});

  // A new request: this one's acceptance evidence joins each class's history (the prior its
  // estimates start from and drift back to); learned costs are kept.
  void reset();
  // A verification forward of n tokens took `ms`.
  void observe_cost(int32_t n, double ms);
  double cost_ms(int32_t n) const;  // t(n) as the budget currently believes it, never below t(m < n)
  // Drafting `nodes` nodes of class `cls` took `ms` (SAM's retrieval costs ~nothing, its
  // draft-model fallback a forward per level: c is learned per class, and kept across requests).
  void observe_draft_cost(int32_t cls, int32_t nodes, double ms);
  double draft_cost(int32_t cls) const;  // c for a class
  // Drafted nodes a proposal of class `cls` pays for, at most `max_nodes`.
  // A tree cannot accept more tokens than it is deep: with max_depth < max_nodes, nodes beyond
  // the depth add cost but no expected tokens in this model (so a tree drafter gets few nodes
  // unless its levels are accepted almost surely).
  int32_t nodes_for(int32_t cls, int32_t max_nodes, int32_t max_depth = INT32_MAX) const;
  // Class 0's nodes when the draft model's first forward must run `first_rows` rows: its catch-up
  // with the text (the prompt on a request's first draft, the tokens of the steps it did not
  // draft) and the root. The catch-up is a price paid once to switch drafting on, and counted in
  // one step it would keep a draft model off for good; ignored, it was paid after every stretch
  // of undrafted steps whether the drafts then paid or not. So it is paid as in ski rental (as
  // serve's batch planner does): nodes_for(0)'s length once the gains forgone while that length
  // would have paid add up to the catch-up's price and the tokens left can repay it, else none.
  int32_t model_nodes(int32_t max_nodes, int32_t max_depth, int64_t first_rows, int64_t remaining_tokens);
  // After a step: a proposal of class `cls` drafted `drafted` levels, `accepted` of them were kept.
  void observe(int32_t cls, int32_t drafted, int32_t accepted);
  void observe(int32_t drafted, int32_t accepted) { observe(0, drafted, accepted); }

  Acceptance acceptance(int32_t cls = 0) const;  // the current estimates for a class
  // The estimates before any evidence (a1, a2; options().prior_acceptance for both until set),
  // worth prior_weight observed tokens: a server starts a request from what its method's last
  // requests showed (serve/acceptance_history.h). Each in (0, 1).
  void set_prior(Acceptance prior);
  // The evidence behind a class's estimates: its first levels tried, decayed as the counts.
  double evidence(int32_t cls = 0) const;
  // The next steps' batch load (until set again); reset() keeps it.
  void set_batch_load(const BatchLoad& load) { load_ = load; }
  // Committed tokens a step of k drafted nodes of class `cls` is expected to give (the root's
  // token included).
  double expected_tokens(int32_t cls, int32_t k, int32_t max_depth = INT32_MAX) const;
  // Expected committed tokens per millisecond with k drafted nodes (the batch's, under a load).
  double rate(int32_t k, Acceptance a, int32_t max_depth = INT32_MAX, double draft_ms_per_node = -1) const;
  double rate(int32_t k, double a) const { return rate(k, Acceptance{a, a}); }
  // The same for k drafted nodes expected to commit `expected` tokens (the root's included), for a
  // drafter whose nodes are not a chain (AdaPLD's branches); c: the drafter's cost per node.
  double rate_of(int32_t k, double expected, double draft_ms_per_node) const;
  const DraftBudgetOptions& options() const { return options_; }
  const CostCurve& cost() const { return cost_; }

 private:
  CostCurve cost_;
  DraftBudgetOptions options_;
  Acceptance prior_;
  Acceptance class_prior(int32_t cls) const;  // prior_ moved towards the class's history
  int32_t best_nodes(Acceptance a, int32_t max_nodes, int32_t max_depth, double draft_ms_per_node) const;
  std::map<int32_t, double> draft_ms_per_node_;  // learned c per class
  struct Counts {
    double first_accepted = 0, first_tried = 0, next_accepted = 0, next_tried = 0;  // decayed
    int64_t last_drafted = 0;           // step_ when the class last drafted
  };
  std::map<int32_t, Counts> classes_;
  std::map<int32_t, Counts> history_;  // per class, the earlier requests' counts (reset())
  int64_t step_ = 0;  // steps observed since reset()
  double forgone_ms_ = 0;  // model_nodes' switch-on account, since reset()
  DraftingRuns runs_;      // model_nodes' steps, kept across requests as the costs are
  std::vector<double> observed_ms_;  // index n: running mean of verify times, 0 if none yet
  BatchLoad load_;
};

}  // namespace specd
