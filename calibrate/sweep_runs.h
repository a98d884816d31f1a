#pragma once
// One run of a parameter sweep (specd calibrate sweep): a method at one point of its parameter
// grid measured against AR over the calibration prompts with compare_methods (prompts and
// repeats interleaved, medians), reduced to what the artifact stores per run (SweepRun).
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "artifact/artifact.h"
#include "sampling/sampler.h"
#include "methods/method_registry.h"
#include "speculative/draft_budget.h"
#include "util/progress.h"
#include "workload/workload.h"

namespace specd {

class LlamaModel;
class Tokenizer;

struct SweepSetup {
  const LlamaModel* target = nullptr;
  std::shared_ptr<const LlamaModel> draft;  // null when the family needs none
  const Tokenizer* tokenizer = nullptr;
  const Artifact* artifact = nullptr;       // the pair's artifact, for methods that load a calibration
  std::string artifact_name = "artifact";
  std::string family;                       // the method measured
  std::vector<WorkloadItem> items;          // the calibration prompts
  int repeats = 3;
  SamplingParams sampling;
  std::vector<int32_t> stop_tokens;
  // The forward-cost curves every run's draft budget starts from, timed once per process (a
  // resumed sweep times them again). Runs compare speeds: each timing its own, the large pair's
  // csd sweep had t(6)/t(1) anywhere from 1.12 to 1.42 and one policy's three runs at 1.54x to
  // 1.92x AR. Unset: each run measures.
  std::optional<CostCurve> target_cost, draft_cost;
};

// Requests one run makes (progress steps): prompts x repeats x 2 methods.
int64_t sweep_run_requests(const SweepSetup& setup);

// Measures `options` (the base with the run's point) against AR: per category and overall MAT,
// acceptance, tokens/s of both, speedup and its 95% half-width, decode speedup, relaxed and
// rescued per token, outputs equal to AR's, the target's NLL per token of both, chrF of the
// method's output against AR's, the target cost curve the run used and its wall time.
SweepRun measure_sweep_run(const SweepSetup& setup, int32_t index, const MethodOptions& options, std::vector<double> values,
                           std::string point, Progress& progress);

}  // namespace specd
