// TEMPORARY seam placeholder, replaced by the section's implementation before merge.
#include "analysis/sections.h"

namespace specd::report {

Section sweeps_section(const ReportInputs&) { return {"sweeps", "Sweeps", {Paragraph{"not built yet"}}}; }

}  // namespace specd::report
