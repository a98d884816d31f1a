// TEMPORARY seam placeholder, replaced by the section's implementation before merge.
#include "analysis/sections.h"

namespace specd::report {

std::vector<Block> what_if_csd_blocks(const ReportInputs&) { return {Paragraph{"not built yet"}}; }

}  // namespace specd::report
