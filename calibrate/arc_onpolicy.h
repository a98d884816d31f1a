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
#include <optional>
#include <string>
#include <vector>

#include "calibrate/arc_samples.h"
#include "stats/arc_gate.h"

namespace specd {

// The stages of an on-policy calibration. all: the pilot, then the deploy sites, in one unsharded
// run. pilot: the pilot's candidate samples alone (its shards merge into a pilot, whose constants
// are fitted on all of them). deploy: the deploy sites, run with a finished pilot's constants; each
// run carries the pilot's samples of the units it owns, so its shards are shards of the whole
// calibration and their merge is what the unsharded run writes.
enum class ArcStage { all, pilot, deploy };
// "all", "pilot" or "deploy"; InputError naming `where` otherwise.
ArcStage parse_arc_stage(const std::string& text, const std::string& where);

// Whether calibration unit `prompt` is the pilot's (the held-out audit prompts and the even
// calibration prompts) rather than the deploy sites' (the odd calibration prompts).
inline bool is_arc_pilot_unit(int32_t prompt, bool held_out) { return held_out || prompt % 2 == 0; }

// The part of a finished pilot (the merged pilot stage, or a whole calibration with the same
// settings) that a deploy-stage run owns: the prompt rows and candidate samples of `units`,
// appended to `into`. `pair` is the artifact being written (its target and draft) and `settings`
// this run's provenance. InputError naming `where` when the pilot holds no ARC calibration, was
// made with another pair or other settings (its stage aside), is an unmerged shard, or lacks a unit.
void take_arc_pilot(const Artifact& pilot, const Artifact& pair, const CalibrationProvenance& settings, const std::vector<int32_t>& units,
                    const std::string& where, ArcCalibration& into);

// The gate an on-policy calibration chose (from artifact.arc's gate rows and its options), written
// as the ('arc', 'theta') threshold in place of one an earlier `calibrate arc` wrote (a swept one
// stays): the last step of `calibrate arc` and of `artifact merge`. Nothing for a calibration
// without deploy sites (the paper's candidates, a pilot). InputError naming `where` for malformed options.
std::optional<ArcGateChoice> apply_arc_gate(Artifact& artifact, const std::string& where);

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
