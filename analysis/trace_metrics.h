#pragma once
// Deploy-time numbers of trace runs (specd bench --traces), per run and category, for the
// deployment and drift sections: MAT, acceptance per draft position, the accepted-length
// histogram, the time split, speedup and exact match against the same file's ar run, rescued and
// relaxed rates, and the quality bench's per-request tally stored with each request.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analysis/report_inputs.h"
#include "bench/quality.h"
#include "stats/statistics.h"
#include "stats/intervals.h"

namespace specd::report {

// One run's sums in one category (or "overall").
struct RunMetrics {
  int64_t requests = 0, new_tokens = 0;
  int64_t steps = 0;        // traced speculative steps
  int64_t bench_steps = 0;  // steps as bench counts them (its tally's, each turn's prefill included), else traced
  int64_t drafted = 0, accepted = 0, rescued = 0, relaxed = 0;
  int64_t lossy_steps = 0;  // steps verified by a lossy acceptor (StepTrace::lossless false)
  double wall_ms = 0, draft_ms = 0, verify_ms = 0, accept_ms = 0;
  // Position d (index d - 1): steps whose first d - 1 drafted tokens were accepted and that
  // drafted at least d nodes, and those of them that accepted the d-th.
  std::vector<int64_t> position_reached, position_accepted;
  std::vector<int64_t> length_steps;  // steps per accepted length (index = length)
  // Per request, for intervals of ratios over requests: (accepted, drafted), (new tokens, bench steps).
  std::vector<std::pair<double, double>> acceptance_pairs, mat_pairs;
  // Against the ar run of the same file, item by item (same workload id).
  MeanAccumulator speedup;          // (tokens / wall) / AR's (tokens / wall)
  int64_t compared = 0, equal_to_ar = 0;  // items with an AR twin; equal output hashes
  // From bench's per-request tally (requests.measurement), when the trace holds one.
  double nll = 0;
  int64_t nll_tokens = 0;
  ChrfStats chrf;
  int64_t chrf_turns = 0;

  double other_ms() const { return wall_ms - draft_ms - verify_ms - accept_ms; }
};

struct RunSummary {
  std::string file, method, label;  // label: the method, with file and run id when methods repeat
  int64_t run_id = 0;
  std::string settings;             // the run's "settings" option (where its parameters came from), "" if none
  double temperature = 0;           // the run's --temperature (0 when not recorded)
  std::optional<int64_t> ar_run;    // the ar run compared against
  std::map<std::string, RunMetrics> by_category;  // "overall" included
  std::vector<std::string> categories;            // by name, "overall" last
};

// Every run of every file, in input order. Never throws on odd contents (malformed option or
// measurement JSON is skipped).
std::vector<RunSummary> summarize_traces(const std::vector<TraceFile>& files);

// Adds one step to the position, length and time sums (exposed for tests).
void add_step(RunMetrics& m, const StepTrace& step);

// A ratio of sums over requests, sum(a) / sum(b), with its 95% Student-t interval from the
// linearized per-request residuals a_i - R b_i (the ratio estimator's standard error); no
// interval below two requests or when sum(b) is 0.
struct RatioEstimate {
  double value = 0;
  std::optional<Interval> interval;
};
std::optional<RatioEstimate> ratio_interval(const std::vector<std::pair<double, double>>& pairs);

// The two-sided 95% quantile of Student's t with `dof` degrees of freedom.
double t_quantile_975(int64_t dof);

}  // namespace specd::report
