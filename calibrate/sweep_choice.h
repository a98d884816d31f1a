#pragma once
// Which run of a parameter sweep to deploy (specd calibrate sweep, specd artifact merge), from
// the stored runs alone, so that anyone can recompute it from the artifact:
// - a lossless family: the run with the highest overall speedup over AR;
// - a lossy one: the fastest run inside the drift contract. The contract (version 4): with
//   probability at least `confidence` over every planned run of the grid at once (Bonferroni:
//   each run's tests at level (1 - confidence) / planned_runs; Learn-then-Test, Angelopoulos et
//   al. 2021), the mean over prompts of the target's NLL per token increase over AR is at most
//   max_nll_increase (one-sided t-test on the per-prompt increases), and at temperature 0 the
//   mean per-prompt chrF against AR's output is at least min_chrf (one-sided t-test) and the share
//   of outputs that differ from AR's is at most max_changed (exact binomial test; skipped at 1).
//   At T > 0 (version 5) the mean per-prompt expected total-variation distance per generated token
//   is at most max_tv (one-sided t-test; skipped at 1), in place of the NLL test: there the
//   method's and AR's outputs are two samples whose NLL per token differs by sampling noise (on
//   the large demo pair at T = 1, a per-prompt sd of about 1.3 nats), so 60 prompts cannot show a
//   0.05 bound even for a run that rescued nothing (reports/bench/sweep-csd-large-t1.txt). TV is
//   computed, not sampled: CSD's rescue
//   and ARC's relaxation change a step only where the lossless test rejected, and emit a token the
//   residual it replaces gives probability 0 (CSD: a draft token x with q(x) > p(x), for a target
//   token y with p(y) > q(y); ARC: a child whose own rejection zeroed it in the residual), so at
//   each position the TV between the acceptor's distribution and the target's equals the
//   probability that the rule fires there, and the firings per token (rescued + relaxed) are an
//   unbiased estimate of its mean per token (tests/speculative: the empirical distribution of
//   many draws against the target's).
//   A run with fewer than two prompts cannot pass a t-test. At T > 0 two samples differ even
//   without drift, so chrF and exact match are not applied. A version-3 sweep (confidence 0)
//   compares the point estimates with the bounds instead, as it was chosen then.
// Ties go to the lower run index. No run qualifies: none is chosen, and the reason says why.
#include <optional>
#include <string>

#include "artifact/artifact.h"

namespace specd {

struct SweepChoice {
  std::optional<int32_t> run;  // a SweepRun::index
  // "sweep run 4 of 9: 1.23x AR, fastest lossless" (the thresholds' source), or why none qualified.
  std::string reason;
};

// Whether chrF against AR bounds the drift for this sweep (greedy decoding only).
bool sweep_applies_chrf(const SweepCalibration& sweep);
// Whether the expected TV per token bounds it (sampling, a bound below 1, a version-5 contract).
bool sweep_applies_tv(const SweepCalibration& sweep);

// One run's tests under the contract: each p-value (0 for a test not applied) and whether every
// one is at most the family-wise level.
struct SweepRunTest {
  double p_nll = 0, p_chrf = 0, p_changed = 0, p_tv = 0;
  double level = 0;  // (1 - confidence) / planned_runs
  bool valid = false;
};
SweepRunTest sweep_run_test(const SweepCalibration& sweep, const SweepRun& run);
// The level each run's tests must reach: (1 - confidence) / planned runs.
double sweep_test_level(const SweepCalibration& sweep);

// Whether one run is inside the sweep's drift contract (always true for a lossless family).
bool sweep_run_within_bounds(const SweepCalibration& sweep, const SweepRun& run);
// The contract in words, for the choice's reason and the reports.
std::string sweep_contract_text(const SweepCalibration& sweep);
SweepChoice choose_sweep_run(const SweepCalibration& sweep);

// Whether a thresholds row gives way to this sweep's choice: a row of the family that an earlier
// sweep wrote (its source starts with "sweep "), or that names one of this grid's parameters.
// Other rows of the family (e.g. calibrate csd's paper defaults for a parameter not swept) stay.
bool replaced_by(const SweepCalibration& sweep, const Threshold& row);
// Sets sweep.chosen and sweep.choice from choose_sweep_run, removes the rows replaced_by the
// sweep and adds the chosen run's grid values (one row per grid axis; the family's parameters
// outside the grid keep their defaults). With no run chosen nothing is added. Returns the choice.
SweepChoice apply_sweep_choice(Artifact& artifact, SweepCalibration& sweep);

}  // namespace specd
