#pragma once
// ARC-Decode's calibration samples (the ARC-Decode paper Algorithm 1), prompt by prompt into a journal.
//
// Where the samples come from: standard speculative decoding (sd-tree, fixed budget) at the
// calibrated sampling settings. At each step whose last accepted node u has children in the tree
// (the target rejected them: the only place the runtime's LTS test is ever asked), position j is
// the one after u. There t_m is the target's argmax, t_d a token drawn uniformly from the target's
// top-K without t_m, and the sample holds
//   u_emb_raw   = ||W (e_td - e_tm)||^2 (W: whitening, 1 / sigma per embedding column),
//   u_logit_raw = (log p~(t_m) - log p~(t_d))^2, p~ the processed probabilities (temperature,
//                 top-k, top-p; one-hot on the argmax when greedy) clamped at epsilon,
//   js          = JS between the target's next-step distributions after t_d and after t_m, over
//                 the union of their top-K, smoothed by mu (runtime/stats/divergence.h),
// with the step's depth of j and H_m, the target's normalized entropy (nats / log V, temperature
// 1) at the distribution the step's root was drawn from (what the runtime's pruner sees).
// The divergences need two target forwards per sample that continue C = the tokens before j: a
// second pass over the decoded text (one chunked forward up to each j, then t_d and t_m as two
// siblings on top, dropped again), so the decoding itself stays the engine's.
// t_d is drawn from a stream of (seed, prompt index, step): a resumed or sharded run equals an
// uninterrupted one.
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "artifact/artifact.h"
#include "calibrate/calibration_journal.h"
#include "calibrate/calibration_runs.h"
#include "methods/method_registry.h"
#include "speculative/model_tree_drafter.h"
#include "util/progress.h"
#include "workload/workload.h"

namespace specd {

class LlamaModel;
class Tokenizer;

struct ArcSampleOptions {
  CalibrationRunOptions run;   // sampling (prompt i decoded with seed + i), max_new_tokens, shard
  TreeDraftOptions tree;       // the draft tree of the sd-tree runs
  int32_t top_k = 10;          // K
  double mu = 1e-4;
  double epsilon = 1e-6;
};

// W's diagonal: 1 / (population standard deviation) of each column of the target's input
// embedding table (a zero deviation gives 0: that coordinate cannot tell tokens apart).
std::vector<float> embedding_whitening(const LlamaModel& target);

// One prompt's samples. held_out marks an audit prompt; `index` is the prompt's index in the
// artifact (audit prompts follow the calibration prompts).
struct ArcPromptWork {
  int32_t index = 0;
  const WorkloadItem* item = nullptr;
  bool held_out = false;
};

// Where a sample is taken: position j with its step and depth, the step's root position (for H_m),
// and t_d when it is given (the deploy audit: the token a run relaxed; a deploy site: a rejected
// child), else drawn. A deploy site carries its run's gate and whether it relaxed this child.
struct ArcSite {
  int32_t step = 0, depth = 0;
  int64_t position = 0, root_position = 0;
  int32_t draft_token = -1;
  bool deploy_site = false, relaxed = false;
  double theta = 0;
};

// The samples of one decoded sequence (prompt + output) at `sites` (non-decreasing positions,
// each within the sequence; siblings share a position): the second pass described above. A site
// whose t_d would equal t_m (a drawn candidate list that is empty, a given token that is the
// argmax) gives no sample, except a deploy site: it gives one with js and both raw bounds 0.
std::vector<ArcSample> measure_arc_sites(const LlamaModel& target, const std::vector<float>& whitening, const ArcSampleOptions& options,
                                         int32_t prompt_index, const std::vector<int32_t>& sequence, const std::vector<ArcSite>& sites,
                                         bool held_out);

// Where one step's samples are taken: called with the step's tree and result, its index and its
// root's sequence position (node depth d sits at root_position + d); appends sites.
using ArcSiteCollector = std::function<void(const DraftTree&, const AcceptResult&, int32_t step, int64_t root_position, std::vector<ArcSite>&)>;

// One prompt of a calibration: decodes it with the policy `make` builds for its sampling (seed +
// index), collects sites step by step, measures them over the emitted text and records the prompt
// and its samples in the journal (one transaction).
void decode_arc_prompt(const LlamaModel& target, const Tokenizer& tokenizer, const ArcPromptWork& work, const std::vector<int32_t>& stop_tokens,
                       const std::vector<float>& whitening, const ArcSampleOptions& options,
                       const std::function<Policy(const SamplingParams&)>& make, const ArcSiteCollector& collect,
                       CalibrationJournal& journal);

// The stored order of an ARC calibration's rows, whatever order its parts came in: prompts by
// index, samples by (prompt, step), a step's samples as recorded (stable).
void sort_arc_rows(ArcCalibration& arc);

// Decodes every prompt of `work` that the journal lacks and records its samples there (one
// transaction per prompt). InputError naming the prompt when it does not fit the target's context.
void collect_arc_samples(const LlamaModel& target, std::shared_ptr<const LlamaModel> draft, const Tokenizer& tokenizer,
                         const std::vector<ArcPromptWork>& work, const std::vector<int32_t>& stop_tokens,
                         const std::vector<float>& whitening, const ArcSampleOptions& options, CalibrationJournal& journal,
                         Progress& progress);

}  // namespace specd
