#include "artifact/artifact.h"

#include <tuple>

namespace specd {

std::string readable_versions(int32_t current) {
  return current == kOldestArtifactVersion ? std::to_string(current)
                                           : std::to_string(kOldestArtifactVersion) + " to " + std::to_string(current);
}

bool ModelFingerprint::operator==(const ModelFingerprint& o) const {
  return std::tie(path, config_sha256, tokenizer_sha256, embedding_sha256, vocab_size) ==
         std::tie(o.path, o.config_sha256, o.tokenizer_sha256, o.embedding_sha256, o.vocab_size);
}

bool CalibrationProvenance::operator==(const CalibrationProvenance& o) const {
  return std::tie(command_line, prompts_path, prompts_sha256, prompt_count, shard_index, shard_count, job, machine, shards, seed,
                  temperature, top_k, top_p, options, counts, wall_s) ==
         std::tie(o.command_line, o.prompts_path, o.prompts_sha256, o.prompt_count, o.shard_index, o.shard_count, o.job, o.machine, o.shards,
                  o.seed, o.temperature, o.top_k, o.top_p, o.options, o.counts, o.wall_s);
}

bool CalibratedPrompt::operator==(const CalibratedPrompt& o) const {
  return std::tie(index, id, category, prompt_tokens, new_tokens, steps, drafted, accepted, rejections) ==
         std::tie(o.index, o.id, o.category, o.prompt_tokens, o.new_tokens, o.steps, o.drafted, o.accepted, o.rejections);
}

bool CsdRejection::operator==(const CsdRejection& o) const {
  return std::tie(prompt, step, depth, draft_token, target_token, logit_gap) ==
         std::tie(o.prompt, o.step, o.depth, o.draft_token, o.target_token, o.logit_gap);
}

bool CsdPair::operator==(const CsdPair& o) const {
  return std::tie(draft_token, target_token, count, gap_mean, gap_min, gap_p10, gap_median, gap_p90, gap_max) ==
         std::tie(o.draft_token, o.target_token, o.count, o.gap_mean, o.gap_min, o.gap_p10, o.gap_median, o.gap_p90,
                  o.gap_max);
}

bool CsdCalibration::operator==(const CsdCalibration& o) const {
  return std::tie(provenance, prompts, rejections, pairs) == std::tie(o.provenance, o.prompts, o.rejections, o.pairs);
}

bool SamCorpusCalibration::operator==(const SamCorpusCalibration& o) const {
  return std::tie(provenance, prompts, documents) == std::tie(o.provenance, o.prompts, o.documents);
}

bool ArcSample::operator==(const ArcSample& o) const {
  return std::tie(prompt, step, depth, position, target_token, draft_token, root_entropy, u_emb_raw, u_logit_raw, js, held_out,
                  deploy_site, relaxed, theta) ==
         std::tie(o.prompt, o.step, o.depth, o.position, o.target_token, o.draft_token, o.root_entropy, o.u_emb_raw, o.u_logit_raw,
                  o.js, o.held_out, o.deploy_site, o.relaxed, o.theta);
}

bool ArcGateRow::operator==(const ArcGateRow& o) const {
  return std::tie(theta, prompts, sites, relaxed, relaxed_argmax, misses, risk, risk_high, p_value, valid) ==
         std::tie(o.theta, o.prompts, o.sites, o.relaxed, o.relaxed_argmax, o.misses, o.risk, o.risk_high, o.p_value, o.valid);
}

bool ArcConstants::operator==(const ArcConstants& o) const {
  return std::tie(bucket, samples, rank, c_s, alpha_kappa, tau_delta) ==
         std::tie(o.bucket, o.samples, o.rank, o.c_s, o.alpha_kappa, o.tau_delta);
}

bool ArcAuditRow::operator==(const ArcAuditRow& o) const {
  return std::tie(group_kind, group, samples, covered, coverage, wilson_low, wilson_high, cp_low, cp_high) ==
         std::tie(o.group_kind, o.group, o.samples, o.covered, o.coverage, o.wilson_low, o.wilson_high, o.cp_low, o.cp_high);
}

bool ArcCalibration::operator==(const ArcCalibration& o) const {
  return std::tie(provenance, delta, top_k, mu, epsilon, prompts, whitening, samples, constants, audit, gate) ==
         std::tie(o.provenance, o.delta, o.top_k, o.mu, o.epsilon, o.prompts, o.whitening, o.samples, o.constants, o.audit, o.gate);
}

bool SweepStats::operator==(const SweepStats& o) const {
  return std::tie(category, prompts, new_tokens, equal_to_ar, mat, acceptance, tokens_per_s, ar_tokens_per_s, speedup, speedup_ci95,
                  decode_speedup, relaxed_per_token, rescued_per_token, nll_per_token, ar_nll_per_token, chrf_vs_ar, nll_increase_mean,
                  nll_increase_sd, chrf_mean, chrf_sd, tv_mean, tv_sd) ==
         std::tie(o.category, o.prompts, o.new_tokens, o.equal_to_ar, o.mat, o.acceptance, o.tokens_per_s, o.ar_tokens_per_s, o.speedup,
                  o.speedup_ci95, o.decode_speedup, o.relaxed_per_token, o.rescued_per_token, o.nll_per_token, o.ar_nll_per_token,
                  o.chrf_vs_ar, o.nll_increase_mean, o.nll_increase_sd, o.chrf_mean, o.chrf_sd, o.tv_mean, o.tv_sd);
}

bool SweepRun::operator==(const SweepRun& o) const {
  return std::tie(index, values, point, stats, cost_curve, wall_s) == std::tie(o.index, o.values, o.point, o.stats, o.cost_curve, o.wall_s);
}

bool SweepAxis::operator==(const SweepAxis& o) const { return std::tie(name, values, texts) == std::tie(o.name, o.values, o.texts); }

bool SweepCalibration::operator==(const SweepCalibration& o) const {
  return std::tie(provenance, family, lossless, grid, planned_runs, max_nll_increase, min_chrf, max_changed, max_tv, confidence, runs,
                  chosen, choice) == std::tie(o.provenance, o.family, o.lossless, o.grid, o.planned_runs, o.max_nll_increase, o.min_chrf,
                                              o.max_changed, o.max_tv, o.confidence, o.runs, o.chosen, o.choice);
}

bool Threshold::operator==(const Threshold& o) const {
  return std::tie(policy, name, value, source) == std::tie(o.policy, o.name, o.value, o.source);
}

bool Artifact::operator==(const Artifact& o) const {
  return std::tie(schema_version, created_at, tool_version, git_commit, target, draft, csd, sam_corpus, arc, sweeps, thresholds) ==
         std::tie(o.schema_version, o.created_at, o.tool_version, o.git_commit, o.target, o.draft, o.csd, o.sam_corpus,
                  o.arc, o.sweeps, o.thresholds);
}

}  // namespace specd
