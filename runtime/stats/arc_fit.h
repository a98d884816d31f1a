#pragma once
// ARC-Decode's calibrated constants (the ARC-Decode paper Algorithm 1, lines 11-14) and their coverage
// audit (Table 5), from the calibration samples alone: no model, no libtorch.
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "artifact/arc_buckets.h"
#include "artifact/artifact.h"

namespace specd {

// Optional buckets with constants of their own. Asked together they cross: one bucket per
// (depth, entropy range), named "depth=2,entropy=[0.2,0.4)". Empty: only "all".
struct ArcBuckets {
  bool depth = false;                 // "depth=1", "depth=2", ...: the depths the calibration samples have
  std::vector<double> entropy_edges;  // increasing edges e0 < e1 < ...: "entropy=[e0,e1)", ... over root_entropy
};

// Fits the constants on the samples with held_out == false, "all" first, then each bucket (depth
// ascending, then entropy range), each with n = its samples and rank = conformal_rank(n, delta):
//   c_s = the rank-th smallest of js / u_emb_raw, alpha_kappa likewise of js / u_logit_raw,
//   tau_delta likewise of U_min = arc_bound(c_s, alpha_kappa) over the same samples.
// A zero denominator gives the ratio +inf when js > 0 (no finite constant covers that sample) and
// 0 when js = 0 (any does): every sample keeps its place in every quantile, so the conformal
// guarantee of each holds over all n samples, not over a subset chosen by the data.
// A bucket with too few samples (rank > n) keeps its name, n and rank = n + 1, and carries the
// "all" constants (is_fallback() says so): it is served exactly as a position outside every bucket.
// std::invalid_argument when "all" itself has fewer than conformal_min_samples(delta) samples, a
// sample has a negative or non-finite value, or the edges are not finite and increasing (two or more).
//
// ratio_delta (0: delta) is the level of the two ratio quantiles. The paper fits both at delta
// (Algorithm 1), which bounds the miss rate of JS <= U_min only by 2 delta (either ratio may miss);
// the "split" rule fits them at delta / 2, so that under exchangeability the union bound gives
// P(JS > U_min) <= delta. `rank` is tau_delta's rank either way.
std::vector<ArcConstants> fit_arc_constants(const std::vector<ArcSample>& samples, double delta,
                                            const ArcBuckets& buckets, double ratio_delta = 0);

// Whether a bucket had too few samples and carries the "all" constants.
inline bool is_fallback(const ArcConstants& c) { return c.rank > c.samples; }


// U_min = min(c_s * u_emb_raw, alpha_kappa * u_logit_raw); a zero raw bound contributes 0 even
// against an infinite constant.
double arc_bound(const ArcConstants& c, double u_emb_raw, double u_logit_raw);

// Whether js <= U_min for a sample, under constants_for its depth and entropy.
bool arc_covered(const ArcSample& sample, const std::vector<ArcConstants>& constants);

// The samples whose held_out equals `held_out`, grouped as audit_arc's rows ("all", each category
// by name, each depth ascending), each group counted per prompt with how many meet `hit`: the
// clusters of a prompt-clustered interval (samples of one text are not independent).
// std::invalid_argument for a counted prompt without a category.
struct ArcGroupTally {
  std::string group_kind, group;
  int64_t samples = 0, hits = 0;
  std::map<int32_t, std::pair<int64_t, int64_t>> per_prompt;  // prompt -> (hits, samples)
  std::vector<std::pair<int64_t, int64_t>> clusters() const;  // (hits, samples) per prompt
};
std::vector<ArcGroupTally> tally_arc_groups(const std::vector<ArcSample>& samples, const std::map<int32_t, std::string>& category_of_prompt,
                                            bool held_out, const std::function<bool(const ArcSample&)>& hit);
// A group's coverage row: hits are covered samples, with Wilson and Clopper-Pearson 95% intervals.
ArcAuditRow arc_audit_row(const ArcGroupTally& tally);

// Coverage of js <= U_min (each sample under constants_for its depth and entropy) over the samples
// whose held_out equals `held_out` (false: the calibration split, or deploy samples stored so):
// rows "all", then one per category (by name; category_of_prompt maps a prompt index to its
// category and must hold every counted prompt, else std::invalid_argument), then one per depth
// (ascending), each with its Wilson and Clopper-Pearson 95% intervals. No samples: one "all" row,
// coverage 0 and intervals [0, 1].
std::vector<ArcAuditRow> audit_arc(const std::vector<ArcSample>& samples, const std::vector<ArcConstants>& constants,
                                   const std::map<int32_t, std::string>& category_of_prompt, bool held_out = true);

// The name fit_arc_constants gives an entropy range: "entropy=[0.2,0.4)", each edge in the
// shortest decimal that reads back as the same double.
std::string entropy_bucket_name(double low, double high);

// The buckets `calibrate arc --buckets` asks for, as the provenance stores them: "none", "depth",
// "entropy:0,0.4,0.7,1" (two or more increasing edges over H_m in [0, 1]; an H_m outside them is
// served by "all"), or "depth+entropy:..."; InputError
// naming `where` otherwise.
ArcBuckets parse_arc_buckets(const std::string& text, const std::string& where);
// The ratio level an ARC calibration was fitted with: delta for its provenance's options.rule
// "paper" (or none), delta / 2 for "split"; InputError naming `where` for another rule.
double arc_ratio_delta(const ArcCalibration& arc, const std::string& where);
// The buckets an ARC calibration was fitted with (its provenance's options.buckets).
ArcBuckets arc_buckets_of(const ArcCalibration& arc, const std::string& where);
// The last stage of an ARC-Decode calibration, shared by `calibrate arc` and `artifact merge`:
// fills arc.constants and arc.audit (empty when no sample is held out) from arc.samples (deploy
// sites never enter the constants), arc.gate from the deploy sites (stats/arc_gate.h; empty when
// the calibration sampled none), with the
// rule and buckets of its provenance's options (see fit_arc_constants). InputError naming `where`
// when the samples cannot give finite constants: fewer calibration samples than delta needs, or
// more than delta of them with a zero raw bound and a positive divergence (the quantile is then
// infinite, which no artifact stores).
void fit_arc(ArcCalibration& arc, const ArcBuckets& buckets, const std::string& where);

// Prompt index -> workload category, for audit_arc.
std::map<int32_t, std::string> prompt_categories(const std::vector<CalibratedPrompt>& prompts);

}  // namespace specd
