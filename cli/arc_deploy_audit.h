#pragma once
// ARC-Decode's coverage at deploy: every token an arc run relaxed is a sample; its position and
// tokens come from the trace, the bounds are recomputed from the artifact and the target, and JS
// needs the target's two next-step distributions (the second pass of calibrate/arc_samples.h over
// prompt + output). Shared by `specd audit arc --traces` and `specd report`. Single-turn requests
// only (a later turn's prompt holds earlier answers the trace does not keep apart).
#include <cstdint>
#include <string>
#include <vector>

#include "artifact/artifact.h"
#include "model/device.h"

namespace specd::cli {

struct ArcDeployArgs {
  std::vector<std::string> traces;
  int64_t run = 0;  // 0: every arc and arc-lts-only run of the files
  std::string target_dir, workloads_dir;
  DeviceSpec device;
};

struct ArcDeployAudit {
  std::vector<ArcAuditRow> rows;  // audit_arc's rows: all, categories, depths
  int64_t runs = 0;               // arc runs audited
  int64_t skipped = 0;            // multi-turn or unknown requests
};

// InputError naming the file when a trace file holds no such run and require_runs is set (the
// audit command); the report passes false and gets runs == 0 then.
ArcDeployAudit arc_deploy_audit(const ArcDeployArgs& args, const ArcCalibration& arc, bool require_runs);

}  // namespace specd::cli
