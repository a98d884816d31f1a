#pragma once
// What the ARC parts of the report share: whether the artifact holds a usable ARC calibration
// (else the paragraph saying how to make one), the constants refitted at another risk level with
// the artifact's own rule and buckets, and each sample's bound under a set of constants.
#include <optional>
#include <string>
#include <vector>

#include "analysis/report_document.h"
#include "analysis/report_inputs.h"

namespace specd::report {

// The fitted ARC calibration of the artifact, or none; `why_not` then gets the NotCalibrated
// paragraph ("not calibrated: run specd calibrate arc ..." or "not fitted: ... merge the shards").
const ArcCalibration* fitted_arc(const ReportInputs& in, Paragraph& why_not);

// The constants fit_arc_constants gives the artifact's samples at risk level `delta`, with the
// calibration's buckets and ratio rule (the ratios at delta, or at delta / 2 for "split"); none
// when the calibration split holds too few samples for that delta.
std::optional<std::vector<ArcConstants>> refit_arc_at(const ArcCalibration& arc, double delta, const std::string& where);

// U_min and tau_delta of a sample under the constants serving its depth and root entropy.
struct SampleBound {
  double u_min = 0, tau_delta = 0;
  bool logit_binds = false;  // the logit side is the smaller (ties: the embedding side)
};
SampleBound sample_bound(const std::vector<ArcConstants>& constants, const ArcSample& sample);

// Percent, for tables whose columns say (%).
inline double pct(double share) { return 100 * share; }

// "95.0%" of a share 0.95; a number as %.4g writes it.
std::string percent_text(double share);
std::string g_text(double value);

// A proportion with its 95% Wilson interval, as table cells in percent: {prefix}, {prefix}_low, {prefix}_high.
void put_share(nlohmann::json& row, const std::string& prefix, int64_t successes, int64_t n);

}  // namespace specd::report
