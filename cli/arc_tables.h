#pragma once
// ARC-Decode's constants and coverage audit as the text tables `calibrate arc` and `audit arc` print.
#include <vector>

#include "artifact/artifact.h"

namespace specd::cli {

void print_constants(const std::vector<ArcConstants>& constants, double delta);
// `what` names the coverage ("held-out", "deploy").
void print_audit(const std::vector<ArcAuditRow>& audit, double delta, const char* what);
// The gate's Learn-then-Test table (stats/arc_gate.h) and the threshold chosen.
void print_gate(const std::vector<ArcGateRow>& gate, double js_tolerance, double risk, double confidence);

}  // namespace specd::cli
