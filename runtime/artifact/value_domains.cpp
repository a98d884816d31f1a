#include "artifact/value_domains.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <utility>

namespace specd {
namespace {

std::string number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", v);
  return text;
}

// Collects problems, at most kPerField lines for one field of one file (then a count of the rest).
class Problems {
 public:
  static constexpr int kPerField = 3;

  // "FILE: WHAT is V, DOMAIN" unless ok; FIELD groups the lines of one column or key.
  void check(bool ok, const std::string& file, const std::string& field, const std::string& what, const std::string& value,
             const char* domain) {
    if (ok) return;
    int& seen = per_field_[{file, field}];
    if (++seen <= kPerField) lines_.push_back(file + ": " + what + " is " + value + ", " + domain);
  }
  void non_negative(double v, const std::string& file, const std::string& field, const std::string& what) {
    check(v >= 0 && !std::isnan(v), file, field, what, number(v), "not a count (below 0)");
  }
  void finite(double v, const std::string& file, const std::string& field, const std::string& what) {
    check(std::isfinite(v), file, field, what, number(v), "not finite");
  }
  void unit(double v, const std::string& file, const std::string& field, const std::string& what) {
    check(v >= 0 && v <= 1, file, field, what, number(v), "outside [0, 1]");
  }
  void token(int64_t id, int64_t vocab, const std::string& file, const std::string& field, const std::string& what) {
    if (vocab > 0) check(id >= 0 && id < vocab, file, field, what, std::to_string(id), "outside the target's vocabulary");
  }
  std::vector<std::string> lines() const {
    std::vector<std::string> all = lines_;
    for (const auto& [where, seen] : per_field_)
      if (seen > kPerField)
        all.push_back(where.first + ": " + std::to_string(seen - kPerField) + " more of " + where.second + " out of their domain");
    return all;
  }

 private:
  std::vector<std::string> lines_;
  std::map<std::pair<std::string, std::string>, int> per_field_;
};

const std::string kManifest = "manifest.json", kSqlite = "calibration.sqlite", kH5 = "calibration.h5";

void check_provenance(const std::string& name, const CalibrationProvenance& p, Problems& out) {
  const std::string at = "calibrations." + name + ".";
  out.non_negative(static_cast<double>(p.prompt_count), kManifest, at + "prompts.count", at + "prompts.count");
  out.check(p.shard_count >= 1 && p.shard_index >= 0 && p.shard_index < p.shard_count, kManifest, at + "shard", at + "shard",
            std::to_string(p.shard_index) + "/" + std::to_string(p.shard_count), "not a shard I/N with 0 <= I < N");
  out.check(std::isfinite(p.temperature) && p.temperature >= 0, kManifest, at + "temperature", at + "sampling.temperature",
            number(p.temperature), "not a temperature (finite, >= 0)");
  out.non_negative(static_cast<double>(p.top_k), kManifest, at + "top_k", at + "sampling.top_k");
  out.check(p.top_p > 0 && p.top_p <= 1, kManifest, at + "top_p", at + "sampling.top_p", number(p.top_p), "outside (0, 1]");
  out.check(std::isfinite(p.wall_s) && p.wall_s >= 0, kManifest, at + "wall_s", at + "wall_s", number(p.wall_s),
            "not a duration (finite, >= 0)");
}

void check_prompts(const std::string& policy, const std::vector<CalibratedPrompt>& prompts, Problems& out) {
  for (const CalibratedPrompt& p : prompts) {
    const std::string row = "prompts (" + policy + ", " + std::to_string(p.index) + ") ";
    const std::string field = "prompts." + policy;
    out.non_negative(static_cast<double>(p.index), kSqlite, field + ".prompt_index", row + "prompt_index");
    out.non_negative(static_cast<double>(p.prompt_tokens), kSqlite, field + ".prompt_tokens", row + "prompt_tokens");
    out.non_negative(static_cast<double>(p.new_tokens), kSqlite, field + ".new_tokens", row + "new_tokens");
    out.non_negative(static_cast<double>(p.steps), kSqlite, field + ".steps", row + "steps");
    out.non_negative(static_cast<double>(p.rejections), kSqlite, field + ".rejections", row + "rejections");
    out.check(p.drafted >= 0 && p.accepted >= 0 && p.accepted <= p.drafted, kSqlite, field + ".accepted", row + "accepted/drafted",
              std::to_string(p.accepted) + "/" + std::to_string(p.drafted), "not 0 <= accepted <= drafted");
  }
}

void check_csd(const CsdCalibration& csd, int64_t vocab, Problems& out) {
  check_provenance(kCsdPolicy, csd.provenance, out);
  check_prompts(kCsdPolicy, csd.prompts, out);
  for (const CsdRejection& r : csd.rejections) {
    const std::string row = "/csd/rejections row (prompt " + std::to_string(r.prompt) + ", step " + std::to_string(r.step) + ") ";
    out.non_negative(r.step, kH5, "/csd/rejections/step", row + "step");
    out.check(r.depth >= 1, kH5, "/csd/rejections/depth", row + "depth", std::to_string(r.depth), "not a draft depth (>= 1)");
    out.token(r.draft_token, vocab, kH5, "/csd/rejections/draft_token", row + "draft_token");
    out.token(r.target_token, vocab, kH5, "/csd/rejections/target_token", row + "target_token");
    out.finite(r.logit_gap, kH5, "/csd/rejections/logit_gap", row + "logit_gap");
  }
  for (const CsdPair& p : csd.pairs) {
    const std::string row = "csd_pairs (" + std::to_string(p.draft_token) + ", " + std::to_string(p.target_token) + ") ";
    out.token(p.draft_token, vocab, kSqlite, "csd_pairs.draft_token", row + "draft_token");
    out.token(p.target_token, vocab, kSqlite, "csd_pairs.target_token", row + "target_token");
    out.check(p.count >= 1, kSqlite, "csd_pairs.count", row + "count", std::to_string(p.count), "not a count of rejections (>= 1)");
    const bool ordered = p.gap_min <= p.gap_p10 && p.gap_p10 <= p.gap_median && p.gap_median <= p.gap_p90 && p.gap_p90 <= p.gap_max &&
                         p.gap_min <= p.gap_mean && p.gap_mean <= p.gap_max;
    const bool finite = std::isfinite(p.gap_min) && std::isfinite(p.gap_max) && std::isfinite(p.gap_mean);
    out.check(ordered && finite, kSqlite, "csd_pairs.gap", row + "gaps (min, p10, median, p90, max, mean)",
              number(p.gap_min) + ", " + number(p.gap_p10) + ", " + number(p.gap_median) + ", " + number(p.gap_p90) + ", " +
                  number(p.gap_max) + ", " + number(p.gap_mean),
              "not finite quantiles in order");
  }
}

void check_sam(const SamCorpusCalibration& sam, int64_t vocab, Problems& out) {
  check_provenance(kSamCorpusPolicy, sam.provenance, out);
  check_prompts(kSamCorpusPolicy, sam.prompts, out);
  for (size_t d = 0; d < sam.documents.size(); ++d)
    for (int32_t token : sam.documents[d])
      out.token(token, vocab, kH5, "/sam_corpus/tokens", "/sam_corpus/tokens of document " + std::to_string(d));
}

void check_arc(const ArcCalibration& arc, int64_t vocab, Problems& out) {
  check_provenance(kArcPolicy, arc.provenance, out);
  check_prompts(kArcPolicy, arc.prompts, out);
  // The ranges `specd calibrate arc` accepts.
  out.check(arc.delta > 0 && arc.delta < 1, kManifest, "arc.delta", "calibrations.arc.delta", number(arc.delta), "outside (0, 1)");
  out.check(arc.top_k >= 2, kManifest, "arc.top_k", "calibrations.arc.candidates", std::to_string(arc.top_k), "below 2");
  out.check(arc.mu > 0 && arc.mu < 0.01, kManifest, "arc.mu", "calibrations.arc.mu", number(arc.mu), "outside (0, 0.01)");
  out.check(arc.epsilon > 0 && arc.epsilon < 0.01, kManifest, "arc.epsilon", "calibrations.arc.epsilon", number(arc.epsilon),
            "outside (0, 0.01)");
  for (size_t k = 0; k < arc.whitening.size(); ++k)
    out.check(std::isfinite(arc.whitening[k]) && arc.whitening[k] >= 0, kH5, "/arc/whitening", "/arc/whitening[" + std::to_string(k) + "]",
              number(arc.whitening[k]), "not a finite scale >= 0");
  for (const ArcSample& s : arc.samples) {
    const std::string row = "/arc/samples row (prompt " + std::to_string(s.prompt) + ", step " + std::to_string(s.step) + ") ";
    out.non_negative(s.step, kH5, "/arc/samples/step", row + "step");
    out.check(s.depth >= 1, kH5, "/arc/samples/depth", row + "depth", std::to_string(s.depth), "not a draft depth (>= 1)");
    out.non_negative(static_cast<double>(s.position), kH5, "/arc/samples/position", row + "position");
    out.token(s.target_token, vocab, kH5, "/arc/samples/target_token", row + "target_token");
    out.token(s.draft_token, vocab, kH5, "/arc/samples/draft_token", row + "draft_token");
    // Normalized entropy: [0, 1] up to the float rounding of H / ln V.
    out.check(s.root_entropy >= 0 && s.root_entropy <= 1 + 1e-5, kH5, "/arc/samples/root_entropy", row + "root_entropy",
              number(s.root_entropy), "outside [0, 1]");
    // The raw bounds are squared norms and JS is at most ln 2 (nats).
    for (const auto& [name, v] : {std::pair<const char*, double>{"u_emb_raw", s.u_emb_raw}, {"u_logit_raw", s.u_logit_raw}})
      out.check(std::isfinite(v) && v >= 0, kH5, std::string("/arc/samples/") + name, row + name, number(v), "not a finite bound >= 0");
    out.check(s.js >= 0 && s.js <= std::log(2.0) + 1e-9, kH5, "/arc/samples/js", row + "js", number(s.js), "outside [0, ln 2]");
    // Only deploy sites carry a gate threshold and a relaxation; they are never held out.
    out.check(s.deploy_site || (!s.relaxed && s.theta == 0), kH5, "/arc/samples/relaxed", row + "relaxed",
              std::string(s.relaxed ? "1" : "0") + ", theta " + number(s.theta), "set on a candidate sample");
    out.check(!(s.deploy_site && s.held_out), kH5, "/arc/samples/deploy_site", row + "deploy_site", "1", "on a held-out sample");
    out.check(std::isfinite(s.theta), kH5, "/arc/samples/theta", row + "theta", number(s.theta), "not finite");
  }
  for (const ArcGateRow& r : arc.gate) {
    const std::string row = "arc_gate theta " + number(r.theta) + " ";
    out.check(r.misses <= r.relaxed, kSqlite, "arc_gate.misses", row + "misses", std::to_string(r.misses), "above relaxed");
    for (const auto& [name, v] : {std::pair<const char*, double>{"risk", r.risk}, {"risk_high", r.risk_high}, {"p_value", r.p_value}})
      out.unit(v, kSqlite, std::string("arc_gate.") + name, row + name);
  }
  for (const ArcConstants& c : arc.constants) {
    const std::string row = "arc_constants '" + c.bucket + "' ";
    out.non_negative(static_cast<double>(c.samples), kSqlite, "arc_constants.samples", row + "samples");
    for (const auto& [name, v] : {std::pair<const char*, double>{"c_s", c.c_s}, {"alpha_kappa", c.alpha_kappa}, {"tau_delta", c.tau_delta}})
      out.check(v >= 0, kSqlite, std::string("arc_constants.") + name, row + name, number(v), "not a constant >= 0 (NaN or negative)");
  }
  for (const ArcAuditRow& r : arc.audit) {
    const std::string row = "arc_audit " + r.group_kind + " '" + r.group + "' ";
    for (const auto& [name, v] : {std::pair<const char*, double>{"coverage", r.coverage},
                                  {"wilson_low", r.wilson_low},
                                  {"wilson_high", r.wilson_high},
                                  {"cp_low", r.cp_low},
                                  {"cp_high", r.cp_high}})
      out.unit(v, kSqlite, std::string("arc_audit.") + name, row + name);
    out.check(r.wilson_low <= r.wilson_high && r.cp_low <= r.cp_high, kSqlite, "arc_audit.interval", row + "intervals",
              "[" + number(r.wilson_low) + ", " + number(r.wilson_high) + "], [" + number(r.cp_low) + ", " + number(r.cp_high) + "]",
              "not intervals (low above high)");
  }
}

void check_sweep(const SweepCalibration& sweep, Problems& out) {
  check_provenance(std::string(kSweepCalibration) + "." + sweep.family, sweep.provenance, out);
  const std::string at = "calibrations.sweep." + sweep.family + ".";
  out.check(std::isfinite(sweep.max_nll_increase) && sweep.max_nll_increase >= 0, kManifest, at + "max_nll_increase",
            at + "max_nll_increase", number(sweep.max_nll_increase), "not a bound >= 0");
  out.check(sweep.min_chrf >= 0 && sweep.min_chrf <= 100, kManifest, at + "min_chrf", at + "min_chrf", number(sweep.min_chrf),
            "outside [0, 100]");
  out.check(sweep.max_changed >= 0 && sweep.max_changed <= 1, kManifest, at + "max_changed", at + "bounds.max_changed",
            number(sweep.max_changed), "outside [0, 1]");
  out.check(sweep.max_tv > 0 && sweep.max_tv <= 1, kManifest, at + "max_tv", at + "bounds.max_tv", number(sweep.max_tv), "outside (0, 1]");
  out.check(sweep.confidence == 0 || (sweep.confidence > 0.5 && sweep.confidence < 1), kManifest, at + "confidence",
            at + "bounds.confidence", number(sweep.confidence), "neither 0 (version 3) nor in (0.5, 1)");
  for (const SweepAxis& axis : sweep.grid)
    for (double v : axis.values) out.finite(v, kManifest, at + "grid", at + "grid " + axis.name);
  for (const SweepRun& r : sweep.runs) {
    const std::string row = "sweep " + sweep.family + " run " + std::to_string(r.index) + " ";
    for (double v : r.values) out.finite(v, kSqlite, "sweep_runs.vals", row + "value");
    out.check(std::isfinite(r.wall_s) && r.wall_s >= 0, kSqlite, "sweep_runs.wall_s", row + "wall_s", number(r.wall_s), "not a duration");
    for (const auto& [n, ms] : r.cost_curve)
      out.check(n >= 1 && std::isfinite(ms) && ms >= 0, kSqlite, "sweep_runs.cost_curve", row + "cost_curve point",
                "(" + std::to_string(n) + ", " + number(ms) + ")", "not (tokens >= 1, ms >= 0)");
    for (const SweepStats& s : r.stats) {
      const std::string cat = row + "'" + s.category + "' ";
      out.non_negative(static_cast<double>(s.prompts), kSqlite, "sweep_categories.prompts", cat + "prompts");
      out.non_negative(static_cast<double>(s.new_tokens), kSqlite, "sweep_categories.new_tokens", cat + "new_tokens");
      out.check(s.equal_to_ar >= 0 && s.equal_to_ar <= s.prompts, kSqlite, "sweep_categories.equal_to_ar", cat + "equal_to_ar",
                std::to_string(s.equal_to_ar), "outside 0..prompts");
      out.unit(s.acceptance, kSqlite, "sweep_categories.acceptance", cat + "acceptance");
      out.check(s.chrf_vs_ar >= 0 && s.chrf_vs_ar <= 100, kSqlite, "sweep_categories.chrf_vs_ar", cat + "chrf_vs_ar",
                number(s.chrf_vs_ar), "outside [0, 100]");
      for (const auto& [name, v] : {std::pair<const char*, double>{"mat", s.mat},
                                    {"tokens_per_s", s.tokens_per_s},
                                    {"ar_tokens_per_s", s.ar_tokens_per_s},
                                    {"speedup", s.speedup},
                                    {"speedup_ci95", s.speedup_ci95},
                                    {"decode_speedup", s.decode_speedup},
                                    {"relaxed_per_token", s.relaxed_per_token},
                                    {"rescued_per_token", s.rescued_per_token}})
        out.check(std::isfinite(v) && v >= 0, kSqlite, std::string("sweep_categories.") + name, cat + name, number(v),
                  "not a finite value >= 0");
      for (const auto& [name, v] : {std::pair<const char*, double>{"nll_per_token", s.nll_per_token},
                                    {"ar_nll_per_token", s.ar_nll_per_token},
                                    {"nll_increase_mean", s.nll_increase_mean}})
        out.finite(v, kSqlite, std::string("sweep_categories.") + name, cat + name);
      out.unit(s.tv_mean, kSqlite, "sweep_categories.tv_mean", cat + "tv_mean");
      for (const auto& [name, v] : {std::pair<const char*, double>{"nll_increase_sd", s.nll_increase_sd}, {"chrf_sd", s.chrf_sd}, {"tv_sd", s.tv_sd}})
        out.check(std::isfinite(v) && v >= 0, kSqlite, std::string("sweep_categories.") + name, cat + name, number(v), "not a finite value >= 0");
      out.check(s.chrf_mean >= 0 && s.chrf_mean <= 100, kSqlite, "sweep_categories.chrf_mean", cat + "chrf_mean", number(s.chrf_mean),
                "outside [0, 100]");
    }
  }
}

}  // namespace

std::vector<std::string> value_problems(const Artifact& artifact) {
  Problems out;
  const int64_t vocab = artifact.target.vocab_size;
  out.check(vocab >= 0, kManifest, "target.vocab_size", "target.vocab_size", std::to_string(vocab), "below 0");
  if (artifact.draft)
    out.check(artifact.draft->vocab_size >= 0, kManifest, "draft.vocab_size", "draft.vocab_size", std::to_string(artifact.draft->vocab_size),
              "below 0");
  if (artifact.csd) check_csd(*artifact.csd, vocab, out);
  if (artifact.sam_corpus) check_sam(*artifact.sam_corpus, vocab, out);
  if (artifact.arc) check_arc(*artifact.arc, vocab, out);
  for (const SweepCalibration& sweep : artifact.sweeps) check_sweep(sweep, out);
  for (const Threshold& t : artifact.thresholds)
    out.finite(t.value, kSqlite, "thresholds.value", "thresholds (" + t.policy + ", " + t.name + ") value");
  return out.lines();
}

}  // namespace specd
