#pragma once
// `specd audit arc --traces` and `specd report`: the trace files' arc runs audited at deploy
// (calibrate/arc_deploy_sites.h), the target loaded only when there is a run to audit.
#include <cstdint>
#include <string>
#include <vector>

#include "artifact/artifact.h"
#include "calibrate/arc_deploy_sites.h"
#include "model/device.h"

namespace specd::cli {

struct ArcDeployArgs {
  std::vector<std::string> traces;
  int64_t run = 0;  // 0: every arc and arc-lts-only run of the files
  std::string target_dir, workloads_dir;
  DeviceSpec device;
};

// InputError naming the file when a trace file holds no such run and require_runs is set (the
// audit command); the report passes false and gets runs == 0 then.
ArcDeployAudit arc_deploy_audit(const ArcDeployArgs& args, const ArcCalibration& arc, bool require_runs);

}  // namespace specd::cli
