#include "analysis/report_inputs.h"

#include <fstream>

#include "util/error.h"

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

}  // namespace specd::report
