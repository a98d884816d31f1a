#pragma once
// The last stage of an ARC-Decode calibration, shared by `calibrate arc` and `artifact merge`:
// the constants fitted on the calibration samples (runtime/stats/arc_fit.h) and the held-out
// coverage audit, written into the calibration.
#include <string>

#include "artifact/artifact.h"
#include "stats/arc_fit.h"

namespace specd {

// Fills arc.constants and arc.audit (empty when no sample is held out) from arc.samples, with the
// rule of its provenance's options ("paper" or "split", see fit_arc_constants).
// InputError naming `where` when the samples cannot give finite constants: fewer calibration
// samples than delta needs, or more than delta of them with a zero raw bound and a positive
// divergence (the quantile is then infinite, which no artifact stores).
void fit_arc(ArcCalibration& arc, const ArcBuckets& buckets, const std::string& where);

}  // namespace specd
