#pragma once
// ARC-Decode's text in the CLI: the --buckets option, and the constants and coverage audit as the
// tables `calibrate arc` and `audit arc` print.
#include <string>
#include <vector>

#include "artifact/artifact.h"
#include "stats/arc_fit.h"

namespace specd::cli {

// "none", "depth", "entropy:0.2,0.4,0.6" (increasing edges over H_m in (0, 1)), or "depth+entropy:...";
// InputError naming `where` otherwise.
ArcBuckets parse_arc_buckets(const std::string& text, const std::string& where);

void print_constants(const std::vector<ArcConstants>& constants, double delta);
// `what` names the coverage ("held-out", "deploy").
void print_audit(const std::vector<ArcAuditRow>& audit, double delta, const char* what);

}  // namespace specd::cli
