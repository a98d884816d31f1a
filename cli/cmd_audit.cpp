// specd audit arc: ARC-Decode's coverage audit from a pair's artifact. Recomputes the constants
// from the stored calibration samples (they must equal the stored ones: the artifact is what the
// runtime deploys) and the held-out coverage of JS <= U_min with its Wilson and Clopper-Pearson
// intervals, overall, per workload category and per depth. Exit code 1 when the stored constants
// are not what the samples give.
#include <cstdio>
#include <map>
#include <string>

#include "arc_tables.h"
#include "artifact/artifact_reader.h"
#include "commands.h"
#include "options.h"
#include "stats/arc_fit.h"
#include "util/error.h"

namespace specd::cli {
namespace {

ArcBuckets buckets_of(const ArcCalibration& arc, const std::string& dir) {
  const nlohmann::json& options = arc.provenance.options;
  const std::string text = options.contains("buckets") && options["buckets"].is_string() ? options["buckets"].get<std::string>() : "none";
  return parse_arc_buckets(text, dir + ": manifest arc.options.buckets");
}

bool same_constants(const ArcConstants& a, const ArcConstants& b) {
  return a.bucket == b.bucket && a.samples == b.samples && a.rank == b.rank && a.c_s == b.c_s && a.alpha_kappa == b.alpha_kappa &&
         a.tau_delta == b.tau_delta;
}

int run_audit_arc(const Args& args) {
  std::string dir;
  po::options_description desc("specd audit arc");
  desc.add_options()("artifact", po::value(&dir)->required(), "the pair's artifact directory (made by specd calibrate arc)");
  po::variables_map vm;
  if (!parse(args, desc, vm, "usage: specd audit arc --artifact DIR")) return 0;
  const Artifact artifact = read_artifact(dir);
  if (!artifact.arc) input_error(dir, "holds no ARC-Decode calibration (run specd calibrate arc --out " + dir + ")");
  const ArcCalibration& arc = *artifact.arc;

  const std::vector<ArcConstants> refit = fit_arc_constants(arc.samples, arc.delta, buckets_of(arc, dir));
  bool reproduced = refit.size() == arc.constants.size();
  for (size_t i = 0; reproduced && i < refit.size(); ++i) reproduced = same_constants(refit[i], arc.constants[i]);
  std::map<int32_t, std::string> category_of_prompt;
  for (const CalibratedPrompt& p : arc.prompts) category_of_prompt[p.index] = p.category;
  const std::vector<ArcAuditRow> audit = audit_arc(arc.samples, arc.constants, category_of_prompt, /*held_out=*/true);

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
  return reproduced && audit == arc.audit ? 0 : 1;
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
