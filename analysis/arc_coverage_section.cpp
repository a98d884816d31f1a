// TEMPORARY seam placeholder, replaced by the section's implementation before merge.
#include "analysis/sections.h"

namespace specd::report {

Section arc_coverage_section(const ReportInputs&) { return {"arc-coverage", "ARC coverage", {Paragraph{"not built yet"}}}; }

}  // namespace specd::report
