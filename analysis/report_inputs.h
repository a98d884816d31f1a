#pragma once
// What a report is made from, read once: the artifact (whole, with verify's verdict), trace files
// of deploy runs (specd bench --traces) and bench JSON files (specd bench --json). No model runs
// here; what needs the target (deploy coverage of ARC) is computed by the CLI and passed in.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "artifact/artifact.h"
#include "calibrate/arc_deploy_sites.h"
#include "trace/trace_reader.h"

namespace specd::report {

struct TraceRunData {
  TraceRun run;
  std::vector<TraceRequest> requests;  // by index
  std::vector<StepTraceRow> steps;     // by (request, step)
};

struct TraceFile {
  std::string path;
  std::vector<TraceRunData> runs;
};

struct BenchFile {
  std::string path;
  nlohmann::json json;  // as specd bench --json wrote it: results[method][category], lossless, settings, ...
};

struct ReportInputs {
  std::string artifact_dir;
  Artifact artifact;
  std::vector<std::string> verify_problems;  // verify_artifact's lines; empty: verified
  std::vector<TraceFile> traces;
  std::vector<BenchFile> bench;
  // Token id -> its text (the target's tokenizer); empty when no tokenizer was available, then
  // sections show ids only.
  std::function<std::string(int32_t)> token_text;
  // ARC at deploy (calibrate/arc_deploy_sites.h: every relaxed token of the traces' arc runs,
  // coverage of JS <= U_min, the gate's contract), computed with the target by the CLI; none when
  // the traces hold no arc run or no model was given.
  std::optional<ArcDeployAudit> arc_deploy_audit;
  std::string arc_deploy_note;  // why there is no deploy audit, or what it skipped
};

// Reads every run of a trace file (InputError naming the file when it is not a readable trace).
TraceFile read_trace_file(const std::string& path);
// Reads a bench JSON file (InputError naming the file when it is not JSON with "results").
BenchFile read_bench_file(const std::string& path);

// Where a trace file's runs were measured, for the report's list of sources: "measured on X" when
// every run that records its machine names X (and "some runs do not say" when not all record
// one), "measured on N machines" when they differ, "" when none records one (before version 5).
std::string traces_machine_text(const TraceFile& file);

}  // namespace specd::report
