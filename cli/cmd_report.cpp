// specd report: the coverage-audit report of a pair's artifact and its deployments, as one
// self-contained HTML page with charts and a Markdown twin (analysis/). Everything in it comes
// from the artifact, the traces and the bench JSON given; the target model is read for two things
// only, when it is there: token ids as text, and ARC's coverage at deploy (JS at the relaxed
// positions needs the target's next-step distributions).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "analysis/report_document.h"
#include "analysis/report_inputs.h"
#include "analysis/sections.h"
#include "arc_deploy_audit.h"
#include "artifact/artifact_reader.h"
#include "artifact/verify.h"
#include "speculative/method_params.h"
#include "commands.h"
#include "io/atomic_directory.h"
#include "io/output_path.h"
#include "options.h"
#include "speculative/method_catalog.h"
#include "tokenizer/tokenizer.h"
#include "util/error.h"

namespace specd::cli {
namespace {

bool holds_arc_run(const report::TraceFile& file) {
  for (const report::TraceRunData& r : file.runs)
    if (uses_calibration(r.run.info.method, kArcPolicy)) return true;
  return false;
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out.flush()) input_error(path, "cannot write");
}

}  // namespace

int run_report(const Args& args) {
  std::string out_dir, model_dir, workloads_dir;
  std::vector<std::string> traces, bench;
  bool no_model = false, force = false;
  report::ReportInputs in;
  DeviceSpec device;
  po::options_description desc("specd report");
  desc.add_options()
      ("artifact", po::value(&in.artifact_dir)->required(), "the pair's artifact directory")
      ("traces", po::value(&traces)->composing(), "deploy traces (specd bench --traces F), repeatable")
      ("bench", po::value(&bench)->composing(), "bench results (specd bench --json F), repeatable")
      ("out", po::value(&out_dir)->required(),
       "directory to write report.html and report.md into, replaced whole: it must not exist, be empty or hold an earlier report")
      ("force", po::bool_switch(&force), "replace --out even when it holds other files")
      ("model", po::value(&model_dir), "the target model (default: where the artifact was calibrated, else the demo target): token text and ARC's deploy coverage")
      ("no-model", po::bool_switch(&no_model), "read no model: token ids only, no ARC deploy coverage")
      ("workloads", po::value(&workloads_dir)->default_value(data_dir() + "/workloads"), "the workload directory the traces' requests came from");
  add_device_options(desc, device);
  po::variables_map vm;
  if (!parse(args, desc, vm, "usage: specd report --artifact DIR [--traces F ...] [--bench F.json ...] --out DIR")) return 0;

  check_replaceable_directory(out_dir, {"report.html", "report.md"}, force, "a report", "--out");
  in.artifact = read_artifact(in.artifact_dir);
  for (const std::string& t : traces) in.traces.push_back(report::read_trace_file(t));
  for (const std::string& b : bench) in.bench.push_back(report::read_bench_file(b));
  // Read as given (errors name the paths as typed); from here on the report names its inputs
  // relative to the working directory: it is shared, and must not show this machine's layout.
  in.artifact_dir = portable_path(in.artifact_dir);
  for (std::string* path : {&model_dir, &workloads_dir}) *path = portable_path(*path);
  for (report::TraceFile& t : in.traces) t.path = portable_path(t.path);
  for (report::BenchFile& b : in.bench) b.path = portable_path(b.path);

  if (model_dir.empty() && !no_model)
    model_dir = portable_path(std::filesystem::is_directory(in.artifact.target.path) ? in.artifact.target.path : default_model_dir());
  const bool have_model = !no_model && std::filesystem::is_regular_file(model_dir + "/tokenizer.json");
  if (have_model) ArtifactReader(in.artifact_dir).check_pair(model_dir, "");
  in.verify_problems = verify_artifact(in.artifact_dir, have_model ? model_dir : "", "", threshold_problems);

  std::optional<Tokenizer> tokenizer;
  if (have_model) {
    tokenizer = Tokenizer::from_file(model_dir + "/tokenizer.json");
    in.token_text = [&tokenizer](int32_t id) { return tokenizer->decode({id}); };
  }

  std::vector<std::string> arc_traces;
  for (const report::TraceFile& t : in.traces)
    if (holds_arc_run(t)) arc_traces.push_back(t.path);
  if (arc_traces.empty()) {
    in.arc_deploy_note = "no arc or arc-lts-only run in the traces given";
  } else if (!in.artifact.arc) {
    in.arc_deploy_note = "the artifact holds no ARC-Decode calibration";
  } else if (!have_model) {
    in.arc_deploy_note = no_model ? "--no-model: deploy coverage not measured" : "no target model at " + model_dir + ": deploy coverage not measured";
  } else {
    ArcDeployArgs d{arc_traces, 0, model_dir, workloads_dir, device};
    const ArcDeployAudit audit = arc_deploy_audit(d, *in.artifact.arc, /*require_runs=*/false);
    in.arc_deploy_audit = audit;
    in.arc_deploy_note = std::to_string(audit.runs) + " arc runs audited with the target at " + model_dir +
                         (audit.skipped ? ", " + std::to_string(audit.skipped) + " multi-turn or unknown requests skipped" : "");
  }

  const report::Report r = report::build_report(in);
  AtomicDirectoryWriter writer(out_dir);
  write_text(writer.file("report.html"), report::render_html(r));
  write_text(writer.file("report.md"), report::render_markdown(r));
  writer.commit();
  std::printf("%s: report.html (%.0f KiB), report.md (%.0f KiB)\n", out_dir.c_str(),
              std::filesystem::file_size(out_dir + "/report.html") / 1024.0, std::filesystem::file_size(out_dir + "/report.md") / 1024.0);
  return 0;
}

}  // namespace specd::cli
