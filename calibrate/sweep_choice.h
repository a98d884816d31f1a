#pragma once
// Which run of a parameter sweep to deploy (specd calibrate sweep, specd artifact merge), from
// the stored runs alone, so that anyone can recompute it from the artifact:
// - a lossless family: the run with the highest overall speedup over AR;
// - a lossy one: the fastest run whose drift stays inside the bounds: target NLL per token at
//   most max_nll_increase above AR's, and (at temperature 0 only) chrF against AR's output at
//   least min_chrf. At T > 0 two samples differ even without drift, so chrF is not applied.
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
// Whether one run is inside the sweep's drift bounds (always true for a lossless family).
bool sweep_run_within_bounds(const SweepCalibration& sweep, const SweepRun& run);
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
