#pragma once
// Every value an artifact stores, in its domain: counts non-negative (and accepted <= drafted),
// token ids inside the target's vocabulary (the manifest records its size), gaps, bounds and
// constants finite (ARC's constants may be +inf, the rule for a bucket of too few samples, never
// NaN or negative), probabilities and coverages in [0, 1], ARC's options in the ranges
// `specd calibrate arc` accepts, the sampling settings a calibration ran at, and thresholds
// finite. The rows' agreement with each other is consistency.h's; which thresholds a method may
// deploy and their ranges are the method table's (speculative/method_params.h threshold_problems).
#include <string>
#include <vector>

#include "artifact/artifact.h"

namespace specd {

// One line per problem, each starting with the file that holds the value ("manifest.json: ...",
// "calibration.sqlite: ...", "calibration.h5: ..."); at most a few per column, so a damaged
// array of a million rows gives a short report. Empty when every value is in its domain.
std::vector<std::string> value_problems(const Artifact& artifact);

}  // namespace specd
