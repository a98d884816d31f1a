// specd audit arc: ARC-Decode's coverage audit from a pair's artifact. Recomputes the constants
// from the stored calibration samples (they must equal the stored ones: the artifact is what the
// runtime deploys) and the held-out coverage of JS <= U_min with its Wilson and Clopper-Pearson
// intervals, overall, per workload category and per depth. Exit code 1 when the stored constants
// are not what the samples give.
//
// With --traces F (from `bench --traces` or runs of arc / arc-lts-only): the coverage achieved at
// run time. Every token a run relaxed is a sample: its position and tokens come from the trace,
// the bounds are recomputed from the artifact and the target, and JS needs the target's two
// next-step distributions (the second pass of calibrate/arc_samples.h over prompt + output).
// Deploy coverage with its intervals, overall, per category and per depth; a DRIFT line when a
// group's Wilson interval lies below 1 - delta (exit code 1). Single-turn requests only (a later
// turn's prompt holds earlier answers the trace does not keep apart).
#include <cstdio>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "arc_tables.h"
#include "artifact/artifact_reader.h"
#include "calibrate/arc_samples.h"
#include "commands.h"
#include "model/llama_model.h"
#include "model_files.h"
#include "options.h"
#include "stats/arc_fit.h"
#include "trace/trace_reader.h"
#include "util/error.h"
#include "util/progress.h"
#include "workload/workload.h"

namespace specd::cli {
namespace {

struct DeployArgs {
  std::string traces, target_dir, workloads_dir;
  int64_t run = 0;  // 0: every arc run of the file
  DeviceSpec device;
};

// The relaxed tokens of one request as sites: positions from the steps' accepted lengths.
std::vector<ArcSite> relaxed_sites(const std::vector<StepTraceRow>& steps, int64_t request, int64_t prompt_tokens, int64_t sequence_length) {
  std::vector<ArcSite> sites;
  int64_t root = prompt_tokens;
  int32_t step = 0;
  for (const StepTraceRow& row : steps) {
    if (row.request != request) continue;
    if (!row.record.detail.empty()) {
      const nlohmann::json detail = nlohmann::json::parse(row.record.detail);
      if (detail.contains("acceptance") && detail["acceptance"].contains("lts"))
        for (const auto& node : detail["acceptance"]["lts"]) {
          if (!node.value("relaxed", false)) continue;
          const int32_t depth = node.at("depth").get<int32_t>();
          if (root + depth >= sequence_length) continue;  // the text ended inside the step
          sites.push_back(ArcSite{step, depth, root + depth, root, node.at("token").get<int32_t>()});
        }
    }
    root += row.record.accepted_length + 1;
    ++step;
  }
  return sites;
}

std::vector<ArcAuditRow> deploy_audit(const DeployArgs& d, const ArcCalibration& arc, int64_t& skipped) {
  TraceReader reader(d.traces);
  std::vector<TraceRun> runs;
  for (const TraceRun& run : reader.runs())
    if (d.run ? run.id == d.run : (run.info.method == "arc" || run.info.method == "arc-lts-only")) runs.push_back(run);
  if (runs.empty()) input_error(d.traces, d.run ? "has no run " + std::to_string(d.run) : "holds no arc or arc-lts-only run");
  ModelFiles files = open_model_files(d.target_dir, "", d.device);
  std::map<std::string, WorkloadItem> items;
  for (const WorkloadItem& item : read_workload_suite(d.workloads_dir, {}, INT64_MAX)) items[item.id] = item;

  ArcSampleOptions options;
  options.run.sampling.temperature = arc.provenance.temperature;
  options.run.sampling.top_k = static_cast<int>(arc.provenance.top_k);
  options.run.sampling.top_p = arc.provenance.top_p;
  options.top_k = arc.top_k;
  options.mu = arc.mu;
  options.epsilon = arc.epsilon;
  std::vector<ArcSample> samples;
  std::map<int32_t, std::string> categories;
  int64_t total_requests = 0;
  for (const TraceRun& run : runs) total_requests += run.requests;
  Progress progress(total_requests, "audit arc", "requests");
  int32_t index = 0;
  for (const TraceRun& run : runs) {
    const std::vector<StepTraceRow> steps = reader.steps(run.id);
    for (const TraceRequest& request : reader.requests(run.id)) {
      auto item = items.find(request.info.workload);
      if (item == items.end() || item->second.turns.size() != 1) {
        ++skipped;
        progress.step("request");
        continue;
      }
      std::vector<int32_t> sequence = files.tokenizer.encode(item->second.turns.front(), /*add_special_tokens=*/true);
      const int64_t prompt_tokens = static_cast<int64_t>(sequence.size());
      sequence.insert(sequence.end(), request.outcome.output_tokens.begin(), request.outcome.output_tokens.end());
      const std::vector<ArcSite> sites = relaxed_sites(steps, request.info.index, prompt_tokens, static_cast<int64_t>(sequence.size()));
      categories[index] = request.info.category;
      for (ArcSample& s : measure_arc_sites(*files.model, arc.whitening, options, index, sequence, sites, /*held_out=*/false))
        samples.push_back(s);
      ++index;
      progress.step("request");
    }
  }
  progress.done();
  return audit_arc(samples, arc.constants, categories, /*held_out=*/false);
}

int run_audit_arc(const Args& args) {
  std::string dir;
  DeployArgs d;
  po::options_description desc("specd audit arc");
  desc.add_options()
      ("artifact", po::value(&dir)->required(), "the pair's artifact directory (made by specd calibrate arc)")
      ("traces", po::value(&d.traces), "deploy traces (specd bench --traces) of arc runs: audit the coverage achieved at run time")
      ("run", po::value(&d.run)->default_value(0), "only this run of the traces (0: every arc and arc-lts-only run)")
      ("model", po::value(&d.target_dir)->default_value(default_model_dir()), "the target model the traces ran")
      ("workloads", po::value(&d.workloads_dir)->default_value(data_dir() + "/workloads"), "the workload directory the traces' requests came from");
  add_device_options(desc, d.device);
  po::variables_map vm;
  if (!parse(args, desc, vm, "usage: specd audit arc --artifact DIR [--traces F [--run N] [--model T] [--workloads DIR]]")) return 0;
  const Artifact artifact = read_artifact(dir);
  if (!artifact.arc) input_error(dir, "holds no ARC-Decode calibration (run specd calibrate arc --out " + dir + ")");
  const ArcCalibration& arc = *artifact.arc;

  const std::vector<ArcConstants> refit = fit_arc_constants(arc.samples, arc.delta, arc_buckets_of(arc, dir + ": manifest arc options.buckets"),
                                                         arc_ratio_delta(arc, dir + ": manifest arc options.rule"));
  const bool reproduced = refit == arc.constants;
  const std::vector<ArcAuditRow> audit = audit_arc(arc.samples, arc.constants, prompt_categories(arc.prompts), /*held_out=*/true);

  int64_t calibration = 0, held_out = 0;
  for (const ArcSample& s : arc.samples) (s.held_out ? held_out : calibration) += 1;
  std::printf("%s: ARC-Decode calibration at T=%.2f top-k %lld top-p %.2f, delta %.3g: %lld calibration samples, %lld held-out\n",
              dir.c_str(), arc.provenance.temperature, static_cast<long long>(arc.provenance.top_k), arc.provenance.top_p, arc.delta,
              static_cast<long long>(calibration), static_cast<long long>(held_out));
  print_constants(arc.constants, arc.delta);
  std::printf("  recomputed from the stored samples: %s\n", reproduced ? "equal to the stored constants" : "DIFFERENT from the stored constants");
  if (!reproduced) print_constants(refit, arc.delta);
  print_audit(audit, arc.delta, "held-out");
  if (audit != arc.audit) std::printf("  the stored audit rows differ from the recomputed ones above\n");
  bool drift = false;
  if (!d.traces.empty()) {
    ArtifactReader(dir).check_pair(d.target_dir, "");
    int64_t skipped = 0;
    const std::vector<ArcAuditRow> deploy = deploy_audit(d, arc, skipped);
    std::printf("%s: relaxed tokens of the arc runs%s\n", d.traces.c_str(),
                skipped ? (", " + std::to_string(skipped) + " multi-turn or unknown requests skipped").c_str() : "");
    print_audit(deploy, arc.delta, "deploy");
    for (const ArcAuditRow& r : deploy)
      if (r.samples > 0 && r.wilson_high < 1 - arc.delta) {
        drift = true;
        std::printf("  DRIFT: %s %s covers %.1f%% with Wilson interval [%.1f%%, %.1f%%], below 1-delta = %.1f%%\n", r.group_kind.c_str(),
                    r.group.c_str(), 100 * r.coverage, 100 * r.wilson_low, 100 * r.wilson_high, 100 * (1 - arc.delta));
      }
  }
  return reproduced && audit == arc.audit && !drift ? 0 : 1;
}

}  // namespace

int run_audit(const Args& args) {
  const std::string usage = "usage: specd audit arc --artifact DIR   (specd audit arc --help)";
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    std::printf("%s\n\narc   ARC-Decode: recompute the constants and the held-out coverage from the artifact's samples\n", usage.c_str());
    return 0;
  }
  const Args rest(args.begin() + 1, args.end());
  if (args[0] == "arc") return run_audit_arc(rest);
  input_error("audit", "unknown part '" + args[0] + "' (known: arc)");
}

}  // namespace specd::cli
