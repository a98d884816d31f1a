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
#include <string>

#include "arc_deploy_audit.h"
#include "arc_tables.h"
#include "artifact/artifact_reader.h"
#include "commands.h"
#include "options.h"
#include "stats/arc_fit.h"
#include "stats/arc_gate.h"
#include "util/error.h"

namespace specd::cli {
namespace {

int run_audit_arc(const Args& args) {
  std::string dir, traces;
  ArcDeployArgs d;
  po::options_description desc("specd audit arc");
  desc.add_options()
      ("artifact", po::value(&dir)->required(), "the pair's artifact directory (made by specd calibrate arc)")
      ("traces", po::value(&traces), "deploy traces (specd bench --traces) of arc runs: audit the coverage achieved at run time")
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
  for (const ArcSample& s : arc.samples)
    if (!s.deploy_site) (s.held_out ? held_out : calibration) += 1;
  std::printf("%s: ARC-Decode calibration at T=%.2f top-k %lld top-p %.2f, delta %.3g: %lld calibration samples, %lld held-out\n",
              dir.c_str(), arc.provenance.temperature, static_cast<long long>(arc.provenance.top_k), arc.provenance.top_p, arc.delta,
              static_cast<long long>(calibration), static_cast<long long>(held_out));
  print_constants(arc.constants, arc.delta);
  std::printf("  recomputed from the stored samples: %s\n", reproduced ? "equal to the stored constants" : "DIFFERENT from the stored constants");
  if (!reproduced) print_constants(refit, arc.delta);
  print_audit(audit, arc.delta, "held-out");
  if (audit != arc.audit) std::printf("  the stored audit rows differ from the recomputed ones above\n");
  bool gate_reproduced = true;
  if (has_deploy_sites(arc)) {
    const ArcGateOptions options = arc_gate_options_of(arc, dir + ": manifest arc options");
    const std::vector<ArcGateRow> gate = fit_arc_gate(arc.samples, options);
    gate_reproduced = gate == arc.gate;
    print_gate(gate, options.js_tolerance, options.risk, options.confidence);
    std::printf("  gate recomputed from the stored deploy sites: %s\n", gate_reproduced ? "equal to the stored rows" : "DIFFERENT from the stored rows");
  }
  bool drift = false;
  if (!traces.empty()) {
    ArtifactReader(dir).check_pair(d.target_dir, "");
    d.traces = {traces};
    const ArcDeployAudit result = arc_deploy_audit(d, arc, /*require_runs=*/true);
    std::printf("%s: relaxed tokens of the arc runs%s\n", traces.c_str(),
                result.skipped ? (", " + std::to_string(result.skipped) + " multi-turn or unknown requests skipped").c_str() : "");
    drift = print_deploy_audit(result, arc.delta);
  }
  return reproduced && audit == arc.audit && gate_reproduced && !drift ? 0 : 1;
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
