#include "analysis/report_inputs.h"

#include <algorithm>
#include <fstream>

#include "util/error.h"
#include "util/machine.h"

namespace specd::report {

TraceFile read_trace_file(const std::string& path) {
  TraceFile file{path, {}};
  TraceReader reader(path);
  for (const TraceRun& run : reader.runs()) file.runs.push_back({run, reader.requests(run.id), reader.steps(run.id)});
  return file;
}

BenchFile read_bench_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) input_error(path, "cannot open for reading");
  nlohmann::json json = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) input_error(path, "is not JSON");
  if (!json.is_object() || !json.contains("results") || !json["results"].is_object())
    input_error(path, "is not a specd bench --json file (no \"results\" object)");
  return {path, std::move(json)};
}

std::string traces_machine_text(const TraceFile& file) {
  std::vector<nlohmann::json> machines;
  for (const TraceRunData& run : file.runs) {
    nlohmann::json machine = nlohmann::json::parse(run.run.info.machine_json, nullptr, /*allow_exceptions=*/false);
    if (!machine_text(machine).empty()) machines.push_back(std::move(machine));
  }
  if (machines.empty()) return "";
  std::vector<const nlohmann::json*> distinct;
  for (const nlohmann::json& m : machines)
    if (std::none_of(distinct.begin(), distinct.end(), [&](const nlohmann::json* d) { return same_machine(*d, m); })) distinct.push_back(&m);
  if (distinct.size() > 1) return "measured on " + std::to_string(distinct.size()) + " machines";
  return "measured on " + machine_text(machines.front()) + (machines.size() < file.runs.size() ? "; some runs do not say" : "");
}

}  // namespace specd::report
