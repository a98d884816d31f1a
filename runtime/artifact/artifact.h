#pragma once
// A model pair's calibration artifact, in memory: one directory holding manifest.json,
// calibration.sqlite and calibration.h5 (formats in schemas/README.md). `specd calibrate` builds
// one per target/draft pair; the runtime loads it with --artifact DIR.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace specd {

// Versions this specd writes; it reads each from kOldestArtifactVersion on and refuses any other
// (the upgrade rule in schemas/README.md). Version 2 of all three adds the arc calibration,
// version 3 the parameter sweeps, version 4 ARC's deploy sites and gate (the manifest: their
// options and count), version 5 the sweeps' TV bound and per-prompt TV, version 6 (the manifest
// only) the machine in each provenance; each version's files are the next version's without them.
constexpr int32_t kArtifactSchemaVersion = 6;  // manifest.json
constexpr int32_t kArtifactSqliteVersion = 5;  // calibration.sqlite, PRAGMA user_version
constexpr int32_t kArtifactH5Version = 5;      // calibration.h5, root attribute schema_version (3: as 2; 5: as 4)
constexpr int32_t kOldestArtifactVersion = 1;  // of each of the three
// "1 to 2": the versions of a file this specd reads, for refusals ("schema version 3, this specd reads 1 to 2").
std::string readable_versions(int32_t current);

inline constexpr const char* kManifestFile = "manifest.json";
inline constexpr const char* kSqliteFile = "calibration.sqlite";
inline constexpr const char* kH5File = "calibration.h5";

// The calibrations an artifact can hold: the manifest's keys and the prompts table's policy values.
inline constexpr const char* kCsdPolicy = "csd";
inline constexpr const char* kSamCorpusPolicy = "sam_corpus";
inline constexpr const char* kArcPolicy = "arc";
// The manifest's key of the parameter sweeps (an object by method family).
inline constexpr const char* kSweepCalibration = "sweep";

// What ties an artifact to a model: hashes of what decides its token ids and logits. `path` is
// where it was when calibrated (informative; never compared).
struct ModelFingerprint {
  std::string path, config_sha256, tokenizer_sha256, embedding_sha256;
  int64_t vocab_size = 0;
  bool operator==(const ModelFingerprint& other) const;
};

// How one calibration was made; `counts` holds the totals the writer also derives from the rows.
struct CalibrationProvenance {
  std::string command_line, prompts_path, prompts_sha256;
  int64_t prompt_count = 0;
  int32_t shard_index = 0, shard_count = 1;
  // The scheduler's job and task that ran this shard ({"scheduler", "job_id", "task_id"}), or null.
  nlohmann::json job;
  // The machine that ran it (util/machine.h's machine_json: CPU, cache, threads), or null: before
  // version 6, or after a merge of shards from different machines (each shard's is in `shards`).
  nlohmann::json machine;
  std::vector<nlohmann::json> shards;  // the provenance of each merged shard, in shard order
  uint64_t seed = 0;
  double temperature = 0;
  int64_t top_k = 0;
  double top_p = 1;
  nlohmann::json options = nlohmann::json::object();  // the policy's options, e.g. {"gamma": 6}
  nlohmann::json counts = nlohmann::json::object();
  double wall_s = 0;
  bool operator==(const CalibrationProvenance& other) const;
};

// One calibration prompt as a policy's calibration processed it (a row of the prompts table).
struct CalibratedPrompt {
  int32_t index = 0;
  std::string id, category;
  int64_t prompt_tokens = 0, new_tokens = 0, steps = 0, drafted = 0, accepted = 0, rejections = 0;
  // Kept by the journal for the provenance's wall time; not stored in the artifact (times differ
  // between runs, the tables must not) and not compared.
  double wall_ms = 0;
  bool operator==(const CalibratedPrompt& other) const;
};

// One draft token the target rejected: where (prompt index, step, depth in the draft) and the
// target's raw logit gap z(draft token) - z(target token).
struct CsdRejection {
  int32_t prompt = 0, step = 0, depth = 0, draft_token = 0, target_token = 0;
  float logit_gap = 0;
  bool operator==(const CsdRejection& other) const;
};

// A row of CSD's correction memory: the rejections of one (draft, target) token pair.
struct CsdPair {
  int32_t draft_token = 0, target_token = 0;
  int64_t count = 0;
  double gap_mean = 0, gap_min = 0, gap_p10 = 0, gap_median = 0, gap_p90 = 0, gap_max = 0;
  bool operator==(const CsdPair& other) const;
};

struct CsdCalibration {
  CalibrationProvenance provenance;
  std::vector<CalibratedPrompt> prompts;  // by index
  std::vector<CsdRejection> rejections;   // by (prompt, step, depth)
  std::vector<CsdPair> pairs;             // summarize_pairs(rejections); the writer derives it when empty
  bool operator==(const CsdCalibration& other) const;
};

// SAM-Decoding's static corpus: documents[i] is the target's answer to prompts[i].
struct SamCorpusCalibration {
  CalibrationProvenance provenance;
  std::vector<CalibratedPrompt> prompts;  // by index
  std::vector<std::vector<int32_t>> documents;
  bool operator==(const SamCorpusCalibration& other) const;
};

// One ARC-Decode calibration sample at a position j where the target verified a draft: t_m is the
// target's argmax there. A candidate sample (the ARC-Decode paper Algorithm 1) draws t_d uniformly
// from the target's top-K without t_m; a deploy-site sample is a draft child the target rejected at
// a node of an arc run (on-policy, gate threshold `theta`) whose children were all rejected, where
// the gate considered relaxing it (t_d = t_m there has js = 0 and both raw bounds 0). The raw
// bounds and the true next-step divergence, in nats.
struct ArcSample {
  int32_t prompt = 0;          // prompt index in its prompt file
  int32_t step = 0;            // speculative step within the prompt's decoding, from 0
  int32_t depth = 0;           // depth of position j in the step's draft tree (1: the root's children)
  int64_t position = 0;        // j: the sequence position of the substituted token
  int32_t target_token = 0;    // t_m
  int32_t draft_token = 0;     // t_d
  float root_entropy = 0;      // H_m: the target's normalized entropy at the step's root, in [0, 1]
  double u_emb_raw = 0;        // ||W (e_td - e_tm)||^2
  double u_logit_raw = 0;      // (log p~(t_m) - log p~(t_d))^2 on processed, epsilon-clamped probabilities
  double js = 0;               // JS(q_{j+1}, r_{j+1}) over the top-K union, smoothed by mu (nats)
  bool held_out = false;       // audit split: the constants never see it
  bool deploy_site = false;    // a rejected draft child at an on-policy deploy site (else a candidate sample)
  bool relaxed = false;        // deploy sites: the gate relaxed this child
  double theta = 0;            // deploy sites: the LTS threshold of the run that made it (0 for candidates)
  bool operator==(const ArcSample& other) const;
};

// The constants of one bucket, fitted on the non-held-out samples of that bucket (Algorithm 1,
// lines 11-14) with the finite-sample conformal rank ceil((n + 1)(1 - delta)).
struct ArcConstants {
  std::string bucket = "all";  // "all", or "depth=3", "entropy=[0.2,0.4)" when buckets were asked
  int64_t samples = 0;         // n: calibration samples in the bucket
  int64_t rank = 0;            // the order statistic taken (1-based); n + 1 when there are too few samples
  double c_s = 0;              // c'_s: quantile of js / u_emb_raw
  double alpha_kappa = 0;      // alpha * kappa: quantile of js / u_logit_raw
  double tau_delta = 0;        // quantile of U_min = min(c'_s u_emb_raw, alpha kappa u_logit_raw)
  bool operator==(const ArcConstants& other) const;
};

// Held-out coverage of JS <= U_min in one group, with its 95% intervals.
struct ArcAuditRow {
  std::string group_kind;      // "all", "category", "depth"
  std::string group;           // "all", a workload category, a depth
  int64_t samples = 0, covered = 0;
  double coverage = 0;
  double wilson_low = 0, wilson_high = 0;  // Wilson score interval, 95%
  double cp_low = 0, cp_high = 0;          // Clopper-Pearson (exact) interval, 95%
  bool operator==(const ArcAuditRow& other) const;
};

// The gate's Learn-then-Test at one LTS threshold theta (calibrate/arc_gate.h): the deploy sites
// of the arc runs that used it, how many children it relaxed (t_d != t_m, and t_d = t_m apart),
// how many of the former moved the next-step distribution by more than the JS tolerance, and the
// binomial p-value of "the risk exceeds the tolerated rate" (valid: rejected at the family-wise level).
struct ArcGateRow {
  double theta = 0;
  int64_t prompts = 0, sites = 0, relaxed = 0, relaxed_argmax = 0, misses = 0;
  double risk = 0, risk_high = 0;  // misses / relaxed and its one-sided Clopper-Pearson upper bound at the confidence asked
  double p_value = 1;
  bool valid = false;
  bool operator==(const ArcGateRow& other) const;
};

struct ArcCalibration {
  CalibrationProvenance provenance;        // sampling settings calibrated for; options: delta, K, mu, epsilon, tree, buckets
  double delta = 0.05;                     // risk level
  int32_t top_k = 10;                      // K: candidates and the JS support
  double mu = 1e-4;                        // JS smoothing on the active support
  double epsilon = 1e-6;                   // clamp of p~ before the log
  std::vector<CalibratedPrompt> prompts;   // by index (calibration and audit prompts; categories for the audit)
  std::vector<float> whitening;            // W's diagonal: 1 / sigma_k of the target's input embedding columns
  std::vector<ArcSample> samples;          // by (prompt, step)
  std::vector<ArcConstants> constants;     // "all" first, then buckets in order
  std::vector<ArcAuditRow> audit;          // "all", then categories, then depths
  std::vector<ArcGateRow> gate;            // by theta, strict (high) first; empty without deploy sites
  bool operator==(const ArcCalibration& other) const;
};

// One run of a parameter sweep measured against AR over the calibration prompts, in one
// category or "overall" (specd calibrate sweep). Means over prompts as specd bench --methods
// reports them; NLL per generated token under the target; chrF of the method's output against
// AR's (0..100).
struct SweepStats {
  std::string category;
  int64_t prompts = 0, new_tokens = 0, equal_to_ar = 0;
  double mat = 0, acceptance = 0, tokens_per_s = 0, ar_tokens_per_s = 0;
  double speedup = 0, speedup_ci95 = 0, decode_speedup = 0;  // Spec-Bench mean ratio over AR, its 95% half-width
  double relaxed_per_token = 0, rescued_per_token = 0;
  double nll_per_token = 0, ar_nll_per_token = 0, chrf_vs_ar = 0;
  // Per prompt (version 4): the mean and sample standard deviation over the prompts of the NLL per
  // token increase over AR (the method's minus AR's) and of chrF against AR's output, the inputs
  // of the drift contract's tests (calibrate/sweep_choice.h). 0 in version-3 artifacts.
  double nll_increase_mean = 0, nll_increase_sd = 0, chrf_mean = 0, chrf_sd = 0;
  // Per prompt (version 5): the mean and sample standard deviation over the prompts of the
  // expected total-variation distance per generated token between the distribution each token was
  // drawn from and the target's (calibrate/sweep_choice.h: the lossy rules' firings per token,
  // whose expectation it is). 0 in older artifacts.
  double tv_mean = 0, tv_sd = 0;
  bool operator==(const SweepStats& other) const;
};

struct SweepRun {
  int32_t index = 0;              // 0: the base point (the options as given); 1..: the grid in order
  std::vector<double> values;     // one per grid axis, in grid order
  std::string point;              // "tokens=5 match=earliest", as typed values read
  std::vector<SweepStats> stats;  // per category in name order, "overall" last
  std::vector<std::pair<int32_t, double>> cost_curve;  // the target's ms per forward of n tokens the run used
  double wall_s = 0;
  // The overall row (the last).
  const SweepStats& overall() const { return stats.back(); }
  bool operator==(const SweepRun& other) const;
};

struct SweepAxis {
  std::string name;                 // the method parameter (speculative/method_params.h)
  std::vector<double> values;
  std::vector<std::string> texts;   // the values as typed, one per value
  bool operator==(const SweepAxis& other) const;
};

// A sweep of one method family's parameters: every run, and the run chosen (none for a shard, or
// when no run met the bounds). The choice is a function of what is stored (calibrate/sweep_choice.h).
struct SweepCalibration {
  CalibrationProvenance provenance;  // options: the grid, the base point, repeats
  std::string family;
  bool lossless = true;              // the family's method never changes the target's output
  std::vector<SweepAxis> grid;       // first axis varies slowest
  int32_t planned_runs = 0;          // the base run plus the grid's product (a shard stores its share)
  double max_nll_increase = 0.05;    // lossy bounds: nats per token over AR
  double min_chrf = 90;              // chrF vs AR, applied only at temperature 0
  double max_changed = 1;            // the share of outputs that may differ from AR's, at temperature 0 (1: any)
  double max_tv = 1;                 // expected TV per token, applied only at temperature > 0 (1: any; version 5)
  // The contract's confidence, family-wise over the planned runs; 0: a version-3 sweep, chosen on
  // the point estimates.
  double confidence = 0.95;
  std::vector<SweepRun> runs;        // by index
  std::optional<int32_t> chosen;     // a run index
  std::string choice;                // why that run, or why none
  bool operator==(const SweepCalibration& other) const;
};

struct Threshold {
  std::string policy, name;
  double value = 0;
  std::string source;
  bool operator==(const Threshold& other) const;
};

struct Artifact {
  int32_t schema_version = kArtifactSchemaVersion;
  std::string created_at, tool_version, git_commit;  // the writer fills empty ones (now, this specd)
  ModelFingerprint target;
  std::optional<ModelFingerprint> draft;  // none for a model-free pair
  std::optional<CsdCalibration> csd;
  std::optional<SamCorpusCalibration> sam_corpus;
  std::optional<ArcCalibration> arc;
  std::vector<SweepCalibration> sweeps;  // one per family, by family
  std::vector<Threshold> thresholds;  // by (policy, name)
  bool operator==(const Artifact& other) const;
};

}  // namespace specd
