#pragma once
// The report's sections, one builder each (one file each, named after the section). A section
// whose data the artifact or the traces do not hold says so (Tone::NotCalibrated) instead of failing.
#include <vector>

#include "analysis/report_document.h"
#include "analysis/report_inputs.h"

namespace specd::report {

// 0. Verdict: per deployed policy, speed over AR and over its paper's baseline, drift against the
// contract its thresholds were calibrated under, ARC's gate and coverage at deploy, the command.
Section verdict_section(const ReportInputs& in);
// 1. The pair and its provenance: manifest, verify's verdict, each calibration's settings.
Section provenance_section(const ReportInputs& in);
// 2. ARC coverage: held-out coverage vs 1 - delta (overall, per category, per depth, Wilson and
// Clopper-Pearson), coverage as delta varies, the distributions of the bound's components.
Section arc_coverage_section(const ReportInputs& in);
// 3. CSD memory: size, Pareto curve, top pairs as text, rescues at deploy by pair.
Section csd_memory_section(const ReportInputs& in);
// 4. Sweeps: sensitivity per parameter, speed-vs-drift frontier with the chosen point, best vs
// default vs worst.
Section sweeps_section(const ReportInputs& in);
// 5. Deployment: per policy and category from traces and bench JSON.
Section deployment_section(const ReportInputs& in);
// 6. Drift check: deploy against calibration, acceptance (these blocks) and ARC coverage.
std::vector<Block> drift_acceptance_blocks(const ReportInputs& in);
std::vector<Block> drift_coverage_blocks(const ReportInputs& in);
// 7. What-if from stored samples, no model run: ARC at other theta / delta, CSD at other lambda / tau.
std::vector<Block> what_if_arc_blocks(const ReportInputs& in);
std::vector<Block> what_if_csd_blocks(const ReportInputs& in);

// All eight, in order.
Report build_report(const ReportInputs& in);

}  // namespace specd::report
