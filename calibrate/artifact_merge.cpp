#include "calibrate/artifact_merge.h"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <tuple>

#include "artifact/consistency.h"
#include "artifact/csd_pairs.h"
#include "artifact/manifest.h"
#include "calibrate/arc_onpolicy.h"
#include "stats/arc_fit.h"
#include "calibrate/sweep_choice.h"
#include "util/error.h"

namespace specd {
namespace {

// What must be equal for two runs to be shards of one calibration (paths and command lines may
// differ between machines; the fingerprints and the prompts' hash may not).
nlohmann::json calibration_identity(const ModelFingerprint& target, const std::optional<ModelFingerprint>& draft,
                                    const CalibrationProvenance& p) {
  nlohmann::json identity = {{"target", portable_fingerprint(target)}, {"draft", portable_fingerprint(draft)}};
  identity.update(calibration_settings(p));
  return identity;
}

// The first field of `b` that differs from `a`, as "seed" or "sampling/top_k".
std::string first_difference(const nlohmann::json& a, const nlohmann::json& b) {
  const nlohmann::json patch = nlohmann::json::diff(a, b);
  return patch.empty() ? "" : patch[0]["path"].get<std::string>().substr(1);
}

// Sums the counts of every shard key by key: integers stay integers.
nlohmann::json add_counts(const std::vector<const CalibrationProvenance*>& parts) {
  nlohmann::json total = nlohmann::json::object();
  for (const CalibrationProvenance* p : parts)
    for (const auto& [key, value] : p->counts.items()) {
      if (!total.contains(key)) total[key] = value;
      else if (value.is_number_integer() && total[key].is_number_integer()) total[key] = total[key].get<int64_t>() + value.get<int64_t>();
      else total[key] = total[key].get<double>() + value.get<double>();
    }
  return total;
}

// Checks that `parts` (one per input, in input order) are shards 0..N-1 of one calibration and
// returns them in shard order with the merged provenance.
CalibrationProvenance merge_provenance(const std::string& policy, const std::vector<const Artifact*>& inputs,
                                       const std::vector<const CalibrationProvenance*>& parts,
                                       const std::vector<std::string>& names, std::vector<size_t>& order) {
  const size_t n = parts.size();
  const nlohmann::json identity = calibration_identity(inputs[0]->target, inputs[0]->draft, *parts[0]);
  const int32_t count = parts[0]->shard_count;
  std::map<int32_t, size_t> seen;  // shard index -> input
  for (size_t i = 0; i < n; ++i) {
    const CalibrationProvenance& p = *parts[i];
    const std::string where = names[i];
    const std::string differs = first_difference(identity, calibration_identity(inputs[i]->target, inputs[i]->draft, p));
    if (!differs.empty())
      input_error(where, "not a shard of the same " + policy + " calibration as " + names[0] + " (" + differs + " differs)");
    if (p.shard_count != count)
      input_error(where, policy + " is shard " + std::to_string(p.shard_index) + " of " + std::to_string(p.shard_count) + ", but " +
                             names[0] + "'s is one of " + std::to_string(count));
    const auto [at, fresh] = seen.emplace(p.shard_index, i);
    if (!fresh) input_error(where, policy + " shard " + std::to_string(p.shard_index) + " is also in " + names[at->second]);
  }
  if (seen.size() != static_cast<size_t>(count)) {
    std::vector<std::string> missing;
    for (int32_t s = 0; s < count; ++s)
      if (!seen.count(s)) missing.push_back(std::to_string(s));
    std::string list;
    for (size_t k = 0; k < missing.size(); ++k) list += (k ? ", " : "") + missing[k];
    input_error("merge", policy + (missing.size() == 1 ? " shard " + list + " is" : " shards " + list + " are") + " missing: " +
                             std::to_string(n) + " of the " + std::to_string(count) + " shards were given");
  }
  order.assign(n, 0);
  for (const auto& [index, input] : seen) order[static_cast<size_t>(index)] = input;  // indices 0..n-1, each once

  CalibrationProvenance merged = *parts[order[0]];
  std::vector<const CalibrationProvenance*> ordered;
  merged.command_line = "merge of " + std::to_string(n) + " shards:";
  merged.wall_s = 0;
  for (size_t s = 0; s < n; ++s) {
    const CalibrationProvenance& p = *parts[order[s]];
    ordered.push_back(&p);
    merged.command_line += " " + names[order[s]];
    merged.wall_s += p.wall_s;
    merged.shards.push_back(provenance_json(p));
  }
  merged.shard_index = 0;
  merged.shard_count = 1;
  merged.job = nullptr;  // each shard's job is in `shards`
  for (const CalibrationProvenance* p : ordered)
    if (p->machine != merged.machine) merged.machine = nullptr;  // shards of several machines: each one's is in `shards`
  merged.counts = add_counts(ordered);
  return merged;
}

// Concatenates prompts in shard order, refusing one found in two shards.
template <typename Get>
std::vector<CalibratedPrompt> merge_prompts(const std::string& policy, const std::vector<const Artifact*>& inputs,
                                            const std::vector<size_t>& order, const std::vector<std::string>& names, Get get) {
  std::map<int32_t, size_t> owner;
  std::vector<CalibratedPrompt> prompts;
  for (size_t i : order)
    for (const CalibratedPrompt& p : get(*inputs[i]).prompts) {
      auto [it, fresh] = owner.emplace(p.index, i);
      if (!fresh) input_error(names[i], policy + " prompt " + std::to_string(p.index) + " is also in " + names[it->second]);
      prompts.push_back(p);
    }
  return prompts;
}

// ARC: prompts and samples concatenate (samples by (prompt, step)); the whitening depends only on
// the target, so every shard must hold the same. Constants and audit rows cannot be merged from
// the shards' own: a conformal quantile and a coverage interval over the union are not functions
// of the per-shard ones, and the held-out split spans all prompts. They are left empty here, so
// the merged artifact holds every sample but no constants until they are fitted on the union.
ArcCalibration merge_arc(const std::vector<Artifact>& shards, const std::vector<const Artifact*>& inputs,
                         const std::vector<std::string>& names) {
  std::vector<const CalibrationProvenance*> parts;
  for (const Artifact& a : shards) parts.push_back(&a.arc->provenance);
  const ArcCalibration& first = *shards[0].arc;
  for (size_t i = 1; i < shards.size(); ++i) {
    const ArcCalibration& part = *shards[i].arc;
    if (std::tie(part.delta, part.top_k, part.mu, part.epsilon) != std::tie(first.delta, first.top_k, first.mu, first.epsilon))
      input_error(names[i], "not a shard of the same arc calibration as " + names[0] + " (delta, top_k, mu or epsilon differs)");
    if (part.whitening != first.whitening)
      input_error(names[i], "arc whitening differs from " + names[0] + "'s (another target model?)");
  }
  std::vector<size_t> order;
  ArcCalibration arc;
  arc.provenance = merge_provenance(kArcPolicy, inputs, parts, names, order);
  arc.delta = first.delta;
  arc.top_k = first.top_k;
  arc.mu = first.mu;
  arc.epsilon = first.epsilon;
  arc.whitening = first.whitening;
  arc.prompts = merge_prompts(kArcPolicy, inputs, order, names, [](const Artifact& a) -> const ArcCalibration& { return *a.arc; });
  for (size_t i : order) arc.samples.insert(arc.samples.end(), shards[i].arc->samples.begin(), shards[i].arc->samples.end());
  sort_arc_rows(arc);
  // Constants are quantiles of all the samples: fitted again on the merged ones, as the unsharded run does.
  fit_arc(arc, arc_buckets_of(arc, names[0] + ": manifest arc options.buckets"), "artifact merge");
  arc.provenance.counts.update(derived_counts(arc));
  return arc;
}

// A sweep's shards own disjoint runs (index % N): the runs concatenate by index, and the run to
// deploy is chosen over all of them, as the unsharded sweep chooses.
SweepCalibration merge_sweep(const std::string& family, const std::vector<Artifact>& shards, const std::vector<const Artifact*>& inputs,
                             const std::vector<std::string>& names) {
  std::vector<const SweepCalibration*> parts;
  for (const Artifact& a : shards)
    for (const SweepCalibration& s : a.sweeps)
      if (s.family == family) parts.push_back(&s);
  const SweepCalibration& first = *parts[0];
  for (size_t i = 1; i < parts.size(); ++i)
    if (std::tie(parts[i]->lossless, parts[i]->grid, parts[i]->planned_runs) != std::tie(first.lossless, first.grid, first.planned_runs))
      input_error(names[i], "not a shard of the same " + family + " sweep as " + names[0] + " (its grid differs)");
  std::vector<const CalibrationProvenance*> provenances;
  for (const SweepCalibration* p : parts) provenances.push_back(&p->provenance);
  std::vector<size_t> order;
  SweepCalibration sweep = first;
  sweep.provenance = merge_provenance("sweep " + family, inputs, provenances, names, order);
  sweep.runs.clear();
  std::map<int32_t, size_t> owner;
  for (size_t i : order)
    for (const SweepRun& run : parts[i]->runs) {
      auto [it, fresh] = owner.emplace(run.index, i);
      if (!fresh) input_error(names[i], "sweep " + family + " run " + std::to_string(run.index) + " is also in " + names[it->second]);
      sweep.runs.push_back(run);
    }
  std::stable_sort(sweep.runs.begin(), sweep.runs.end(), [](const SweepRun& a, const SweepRun& b) { return a.index < b.index; });
  sweep.provenance.counts.update(derived_counts(sweep));
  return sweep;
}

std::vector<std::string> sweep_families(const Artifact& a) {
  std::vector<std::string> families;
  for (const SweepCalibration& s : a.sweeps) families.push_back(s.family);
  std::sort(families.begin(), families.end());
  return families;
}

}  // namespace

nlohmann::json portable_fingerprint(const std::optional<ModelFingerprint>& fingerprint) {
  if (!fingerprint) return nullptr;
  nlohmann::json j = fingerprint_json(*fingerprint);
  j.erase("path");
  return j;
}

nlohmann::json calibration_settings(const CalibrationProvenance& p) {
  return {{"prompts sha256", p.prompts_sha256},
          {"prompt count", p.prompt_count},
          {"seed", p.seed},
          {"sampling", {{"temperature", p.temperature}, {"top_k", p.top_k}, {"top_p", p.top_p}}},
          {"options", p.options}};
}

Artifact merge_artifacts(const std::vector<Artifact>& shards, const std::vector<std::string>& names) {
  if (shards.empty() || names.size() != shards.size()) throw std::invalid_argument("merge_artifacts: one name per shard");
  std::vector<const Artifact*> inputs;
  for (const Artifact& a : shards) inputs.push_back(&a);
  for (size_t i = 1; i < shards.size(); ++i) {
    if (shards[i].csd.has_value() != shards[0].csd.has_value() ||
        shards[i].sam_corpus.has_value() != shards[0].sam_corpus.has_value() || shards[i].arc.has_value() != shards[0].arc.has_value() ||
        sweep_families(shards[i]) != sweep_families(shards[0]))
      input_error(names[i], "holds other calibrations than " + names[0]);
    if (shards[i].thresholds != shards[0].thresholds) input_error(names[i], "has other thresholds than " + names[0]);
  }
  if (!shards[0].csd && !shards[0].sam_corpus && !shards[0].arc && shards[0].sweeps.empty()) input_error(names[0], "holds no calibration to merge");

  Artifact merged;
  merged.target = shards[0].target;
  merged.draft = shards[0].draft;
  merged.thresholds = shards[0].thresholds;
  std::vector<size_t> order;
  if (shards[0].csd) {
    std::vector<const CalibrationProvenance*> parts;
    for (const Artifact& a : shards) parts.push_back(&a.csd->provenance);
    CsdCalibration csd;
    csd.provenance = merge_provenance(kCsdPolicy, inputs, parts, names, order);
    csd.prompts = merge_prompts(kCsdPolicy, inputs, order, names, [](const Artifact& a) -> const CsdCalibration& { return *a.csd; });
    for (size_t i : order) csd.rejections.insert(csd.rejections.end(), shards[i].csd->rejections.begin(), shards[i].csd->rejections.end());
    std::stable_sort(csd.prompts.begin(), csd.prompts.end(), [](const auto& a, const auto& b) { return a.index < b.index; });
    sort_rejections(csd.rejections);
    csd.pairs = summarize_pairs(csd.rejections);
    csd.provenance.counts.update(derived_counts(csd));  // pairs do not add up across shards
    merged.csd = std::move(csd);
  }
  if (shards[0].sam_corpus) {
    std::vector<const CalibrationProvenance*> parts;
    for (const Artifact& a : shards) parts.push_back(&a.sam_corpus->provenance);
    SamCorpusCalibration sam;
    sam.provenance = merge_provenance(kSamCorpusPolicy, inputs, parts, names, order);
    sam.prompts = merge_prompts(kSamCorpusPolicy, inputs, order, names,
                                [](const Artifact& a) -> const SamCorpusCalibration& { return *a.sam_corpus; });
    // Documents follow their prompts (documents[i] answers prompts[i] in every shard).
    std::map<int32_t, const std::vector<int32_t>*> documents;
    for (size_t i : order) {
      const SamCorpusCalibration& part = *shards[i].sam_corpus;
      if (part.documents.size() != part.prompts.size())
        input_error(names[i], "sam_corpus has " + std::to_string(part.documents.size()) + " documents for " +
                                  std::to_string(part.prompts.size()) + " prompts");
      for (size_t d = 0; d < part.prompts.size(); ++d) documents[part.prompts[d].index] = &part.documents[d];
    }
    std::stable_sort(sam.prompts.begin(), sam.prompts.end(), [](const auto& a, const auto& b) { return a.index < b.index; });
    for (const CalibratedPrompt& p : sam.prompts) sam.documents.push_back(*documents.at(p.index));
    sam.provenance.counts.update(derived_counts(sam));
    merged.sam_corpus = std::move(sam);
  }
  if (shards[0].arc) {
    merged.arc = merge_arc(shards, inputs, names);
    apply_arc_gate(merged, "artifact merge");  // on-policy shards: the gate is chosen over all their deploy sites
  }
  for (const std::string& family : sweep_families(shards[0])) {
    merged.sweeps.push_back(merge_sweep(family, shards, inputs, names));
    apply_sweep_choice(merged, merged.sweeps.back());
  }
  return merged;
}

}  // namespace specd
