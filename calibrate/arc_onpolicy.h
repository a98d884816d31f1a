#pragma once
// ARC-Decode's deploy sites, sampled on-policy (calibrate arc --sites deploy): the arc policy
// itself (sd-tree's drafter, the entropy-guided pruner, the LTS acceptor with the pilot's
// constants and one gate threshold theta per prompt, the calibrated sampling) decodes calibration
// prompts the pilot never saw. Wherever every child of a node was rejected (the only place the
// gate acts), every child the gate scored becomes a sample: t_d that child, t_m the target's
// argmax, the raw bounds and the true next-step JS from the second pass of calibrate/arc_samples.h
// over the run's own text (relaxed prefixes included), and whether the gate relaxed it. The budget
// is fixed (the whole tree each step) so that a rerun or a resumed run gives the same samples;
// the cost-aware budget drafts a part of the same tree.
#include <memory>
#include <vector>

#include "calibrate/arc_samples.h"

namespace specd {

// One prompt decoded on-policy at gate threshold `theta`.
struct ArcDeployWork {
  int32_t index = 0;
  const WorkloadItem* item = nullptr;
  double theta = 0;
};

// Decodes every prompt of `work` the journal lacks with the arc policy under `pilot`'s constants
// (bucket "all", whitening, epsilon) and records its deploy sites there, one transaction per prompt.
void collect_arc_deploy_sites(const LlamaModel& target, std::shared_ptr<const LlamaModel> draft, const Tokenizer& tokenizer,
                              const std::vector<ArcDeployWork>& work, const std::vector<int32_t>& stop_tokens,
                              const ArcCalibration& pilot, const ArcSampleOptions& options, CalibrationJournal& journal,
                              Progress& progress);

}  // namespace specd
