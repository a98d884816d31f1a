// TEMPORARY seam placeholder, replaced by the section's implementation before merge.
#include "analysis/sections.h"

namespace specd::report {

Section deployment_section(const ReportInputs&) { return {"deployment", "Deployment", {Paragraph{"not built yet"}}}; }

}  // namespace specd::report
