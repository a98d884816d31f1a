#pragma once
// ARC-Decode's constants and coverage audit as the text tables `calibrate arc` and `audit arc` print.
#include <vector>

#include "artifact/artifact.h"
#include "calibrate/arc_deploy_sites.h"

namespace specd::cli {

void print_constants(const std::vector<ArcConstants>& constants, double delta);
// `what` names the coverage ("held-out", "deploy").
void print_audit(const std::vector<ArcAuditRow>& audit, double delta, const char* what);
// The gate's Learn-then-Test table (stats/arc_gate.h) and the threshold chosen.
void print_gate(const std::vector<ArcGateRow>& gate, double js_tolerance, double risk, double confidence);

// The deploy audit: every relaxed token counted (t_d = t_m apart), coverage of JS <= U_min with
// Wilson and request-clustered intervals, the gate's contract when there is one, and a DRIFT line
// per group where an interval lies wholly on the wrong side. Returns whether any DRIFT was printed.
bool print_deploy_audit(const ArcDeployAudit& audit, double delta);

}  // namespace specd::cli
