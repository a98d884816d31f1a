#pragma once
// What the CSD parts of the report share: the thresholds CSD deploys with from this artifact,
// the "not calibrated" line, and token ids shown as readable text.
#include <cstdint>
#include <string>

#include "analysis/report_document.h"
#include "analysis/report_inputs.h"

namespace specd::report {

struct CsdDeployed {
  double lambda = 0, tau = 0;
  std::string lambda_source, tau_source;  // "default", "artifact: paper default"
};

// lambda and tau as `specd ... --methods csd --artifact DIR` deploys them (deploy_params).
CsdDeployed csd_deployed(const Artifact& artifact);

// A number as %g ("6", "0.01").
std::string number_text(double value);

// The paragraph of a CSD part when the artifact holds no csd calibration.
Paragraph csd_not_calibrated();

// A token's text with its whitespace visible ("␣" space, "↵" newline, "⇥" tab, other control
// bytes as \xNN); "" without a tokenizer.
std::string visible_token_text(const ReportInputs& in, int32_t id);
// "'x' → '*' (5 → 2)", or "5 → 2" without a tokenizer.
std::string pair_label(const ReportInputs& in, int32_t draft_token, int32_t target_token);

}  // namespace specd::report
