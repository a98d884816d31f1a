#include "analysis/sections.h"
#include "util/machine.h"

namespace specd::report {

namespace {

Section joined(std::string id, std::string title, std::vector<std::vector<Block>> parts) {
  Section s{std::move(id), std::move(title), {}};
  for (auto& part : parts)
    for (Block& b : part) s.blocks.push_back(std::move(b));
  return s;
}

}  // namespace

Report build_report(const ReportInputs& in) {
  Report r;
  r.title = "specd coverage audit: " + in.artifact_dir;
  r.sources.push_back("artifact " + in.artifact_dir);
  for (const TraceFile& t : in.traces) {
    const std::string machine = traces_machine_text(t);
    r.sources.push_back("traces " + t.path + " (" + std::to_string(t.runs.size()) + " runs" + (machine.empty() ? "" : ", " + machine) + ")");
  }
  for (const BenchFile& b : in.bench) {
    const std::string machine = machine_text(b.json.value("machine", nlohmann::json()));
    r.sources.push_back("bench " + b.path + (machine.empty() ? "" : " (measured on " + machine + ")"));
  }
  r.sections.push_back(verdict_section(in));
  r.sections.push_back(provenance_section(in));
  r.sections.push_back(arc_coverage_section(in));
  r.sections.push_back(csd_memory_section(in));
  r.sections.push_back(sweeps_section(in));
  r.sections.push_back(deployment_section(in));
  r.sections.push_back(joined("drift", "Drift check: deploy against calibration", {drift_acceptance_blocks(in), drift_coverage_blocks(in)}));
  r.sections.push_back(joined("what-if", "What-if from stored samples (no model run)", {what_if_arc_blocks(in), what_if_csd_blocks(in)}));
  return r;
}

}  // namespace specd::report
