#include "arc_deploy_audit.h"

#include <cstdint>

#include "model/llama_model.h"
#include "model_files.h"
#include "workload/workload.h"

namespace specd::cli {

ArcDeployAudit arc_deploy_audit(const ArcDeployArgs& args, const ArcCalibration& arc, bool require_runs) {
  const ArcDeployRuns runs = find_arc_runs(args.traces, args.run, require_runs);
  if (runs.files.empty()) return {};
  ModelFiles model = open_model_files(args.target_dir, "", args.device);  // loaded only when there is something to audit
  return audit_arc_deploy(runs, *model.model, model.tokenizer, read_workload_suite(args.workloads_dir, {}, INT64_MAX), arc);
}

}  // namespace specd::cli
