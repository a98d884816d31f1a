#pragma once
// ARC-Decode's coverage at deploy: every token an arc run relaxed is a sample; its position and
// tokens come from the trace, the bounds are recomputed from the artifact and the target, and JS
// needs the target's two next-step distributions (the second pass of calibrate/arc_samples.h over
// prompt + output). Used by `specd audit arc --traces` and `specd report`. Single-turn requests
// only (a later turn's prompt holds earlier answers the trace does not keep apart).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "artifact/artifact.h"
#include "stats/arc_gate.h"
#include "stats/intervals.h"
#include "trace/trace_reader.h"
#include "workload/workload.h"

namespace specd {

class LlamaModel;
class Tokenizer;

// The runs to audit: per trace file, its arc and arc-lts-only runs (or the one run asked for).
struct ArcDeployRuns {
  struct File {
    std::string path;
    std::vector<TraceRun> runs;
  };
  std::vector<File> files;  // only files that hold such a run
  int64_t requests = 0;     // over every run
};

// The gate's contract at deploy in one group (all, or a category): of the relaxed tokens with
// t_d != t_m, how many moved the next-step JS by more than the tolerance, over how many requests,
// with Wilson and request-clustered 95% intervals of the miss rate.
struct ArcMissRow {
  std::string group_kind, group;
  int64_t requests = 0, tokens = 0, misses = 0;
  double rate = 0;
  Interval wilson, clustered;
};

struct ArcDeployAudit {
  // Coverage of JS <= U_min at the relaxed tokens with t_d != t_m (audit_arc's rows: all,
  // categories, depths), and beside each row its request-clustered 95% interval.
  std::vector<ArcAuditRow> rows;
  std::vector<Interval> clustered;
  int64_t relaxed = 0;         // every relaxed token of the runs
  int64_t relaxed_argmax = 0;  // those with t_d = t_m: nothing substituted, so no JS; a bias to the argmax
  // The gate's contract (its tolerance and risk from the calibration), when the artifact chose its
  // gate on deploy sites: all, then categories.
  std::optional<ArcGateOptions> gate;
  std::vector<ArcMissRow> misses;
  int64_t runs = 0;               // arc runs audited
  int64_t skipped = 0;            // multi-turn or unknown requests
};

// `wanted` 0: every run of a method that relaxes with ARC's constants. InputError naming the file
// when a file holds no such run and `require_runs` is set (the audit command).
ArcDeployRuns find_arc_runs(const std::vector<std::string>& traces, int64_t wanted, bool require_runs);

// Recomputes a sample at every relaxed token of the runs against the target (its prompts found in
// `workloads` by id) and audits them with the artifact's constants and, when it has one, its gate's
// contract. Every request is a cluster (its tokens share a text).
ArcDeployAudit audit_arc_deploy(const ArcDeployRuns& runs, const LlamaModel& target, const Tokenizer& tokenizer,
                                const std::vector<WorkloadItem>& workloads, const ArcCalibration& arc);

}  // namespace specd
