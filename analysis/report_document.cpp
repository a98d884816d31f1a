// TEMPORARY seam placeholder: the renderers land with the rendering work.
#include "analysis/report_document.h"

namespace specd::report {

std::string format_cell(const nlohmann::json& value, const Column&) { return value.dump(); }
std::string render_html(const Report& report) { return "<!doctype html><title>" + report.title + "</title>"; }
std::string render_markdown(const Report& report) { return "# " + report.title + "\n"; }

}  // namespace specd::report
