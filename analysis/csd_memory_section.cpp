// TEMPORARY seam placeholder, replaced by the section's implementation before merge.
#include "analysis/sections.h"

namespace specd::report {

Section csd_memory_section(const ReportInputs&) { return {"csd-memory", "CSD memory", {Paragraph{"not built yet"}}}; }

}  // namespace specd::report
