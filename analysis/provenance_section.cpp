// TEMPORARY seam placeholder, replaced by the section's implementation before merge.
#include "analysis/sections.h"

namespace specd::report {

Section provenance_section(const ReportInputs&) { return {"provenance", "The pair and its provenance", {Paragraph{"not built yet"}}}; }

}  // namespace specd::report
