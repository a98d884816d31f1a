#include "artifact/consistency.h"

#include <map>
#include <set>

#include "artifact/csd_pairs.h"

namespace specd {

using nlohmann::json;

namespace {

json prompt_sums(const std::vector<CalibratedPrompt>& prompts) {
  int64_t new_tokens = 0, steps = 0, drafted = 0, accepted = 0;
  for (const CalibratedPrompt& p : prompts) {
    new_tokens += p.new_tokens;
    steps += p.steps;
    drafted += p.drafted;
    accepted += p.accepted;
  }
  return {{"prompts", static_cast<int64_t>(prompts.size())},
          {"new_tokens", new_tokens},
          {"steps", steps},
          {"drafted", drafted},
          {"accepted", accepted}};
}

void check_counts(const std::string& policy, const CalibrationProvenance& provenance, const json& derived,
                  std::vector<std::string>& problems) {
  for (const auto& [key, value] : derived.items()) {
    const std::string field = "calibrations." + policy + ".counts." + key;
    if (!provenance.counts.contains(key)) problems.push_back("manifest.json: " + field + " is missing");
    else if (provenance.counts[key] != value)
      problems.push_back("manifest.json: " + field + " is " + provenance.counts[key].dump() + ", the rows give " + value.dump());
  }
}

void check_prompt_indices(const std::string& policy, const std::vector<CalibratedPrompt>& prompts,
                          std::vector<std::string>& problems) {
  std::set<int32_t> seen;
  for (const CalibratedPrompt& p : prompts)
    if (!seen.insert(p.index).second)
      problems.push_back("calibration.sqlite: " + policy + " prompt " + std::to_string(p.index) + " appears twice");
}

}  // namespace

json derived_counts(const CsdCalibration& csd) {
  json counts = prompt_sums(csd.prompts);
  counts["rejections"] = static_cast<int64_t>(csd.rejections.size());
  counts["pairs"] = static_cast<int64_t>(csd.pairs.size());
  return counts;
}

json derived_counts(const SamCorpusCalibration& sam) {
  int64_t tokens = 0;
  for (const auto& document : sam.documents) tokens += static_cast<int64_t>(document.size());
  const json sums = prompt_sums(sam.prompts);
  return {{"prompts", sums["prompts"]},
          {"new_tokens", sums["new_tokens"]},
          {"documents", static_cast<int64_t>(sam.documents.size())},
          {"tokens", tokens}};
}

json derived_counts(const ArcCalibration& arc) {
  json counts = prompt_sums(arc.prompts);
  int64_t held_out = 0, deploy_sites = 0;
  for (const ArcSample& x : arc.samples) held_out += x.held_out, deploy_sites += x.deploy_site;
  counts["calibration_samples"] = static_cast<int64_t>(arc.samples.size()) - held_out - deploy_sites;
  counts["held_out_samples"] = held_out;
  if (deploy_sites) counts["deploy_site_samples"] = deploy_sites;  // absent before deploy sites existed
  return counts;
}

json derived_counts(const SweepCalibration& sweep) { return {{"runs", static_cast<int64_t>(sweep.runs.size())}}; }

std::vector<std::string> arc_manifest_problems(const std::vector<ArcConstants>& manifest, const std::vector<ArcConstants>& tables) {
  if (manifest.empty() && tables.empty()) return {};
  if (manifest.empty()) return {"manifest.json: calibrations.arc.constants is null, calibration.sqlite holds arc_constants"};
  if (tables.empty()) return {"manifest.json: calibrations.arc.constants is set, calibration.sqlite holds no arc_constants"};
  if (!(manifest.front() == tables.front()))
    return {"manifest.json: calibrations.arc.constants differs from the first row of arc_constants in calibration.sqlite"};
  return {};
}

namespace {

void check_arc(const ArcCalibration& arc, std::vector<std::string>& problems) {
  check_counts(kArcPolicy, arc.provenance, derived_counts(arc), problems);
  check_prompt_indices(kArcPolicy, arc.prompts, problems);
  std::map<int32_t, std::string> category;
  for (const CalibratedPrompt& p : arc.prompts) category[p.index] = p.category;
  int64_t calibration = 0, held_out = 0;
  std::map<std::string, int64_t> held_out_by_category, held_out_by_depth;
  for (const ArcSample& x : arc.samples) {
    auto it = category.find(x.prompt);
    if (it == category.end()) {
      problems.push_back("calibration.h5: an arc sample of prompt " + std::to_string(x.prompt) + ", which the arc prompts table lacks");
      return;
    }
    if (x.deploy_site) continue;
    if (!x.held_out) ++calibration;
    else {
      ++held_out;
      ++held_out_by_category[it->second];
      ++held_out_by_depth[std::to_string(x.depth)];
    }
  }
  // Constants: "all" first, fitted on every calibration (non-held-out) sample; ranks within 1..n+1.
  if (!arc.constants.empty()) {
    const ArcConstants& all = arc.constants.front();
    if (all.bucket != "all")
      problems.push_back("calibration.sqlite: the first arc_constants row is bucket '" + all.bucket + "', expected 'all'");
    else if (all.samples != calibration)
      problems.push_back("calibration.sqlite: arc_constants 'all' counts " + std::to_string(all.samples) +
                         " samples, calibration.h5 holds " + std::to_string(calibration) + " calibration samples");
    for (const ArcConstants& c : arc.constants)
      if (c.rank < 1 || c.rank > c.samples + 1)
        problems.push_back("calibration.sqlite: arc_constants '" + c.bucket + "' has rank " + std::to_string(c.rank) + " outside 1.." +
                           std::to_string(c.samples + 1));
  }
  // Audit rows count the held-out samples of their group.
  for (const ArcAuditRow& r : arc.audit) {
    int64_t expected = -1;
    if (r.group_kind == "all") expected = held_out;
    else if (r.group_kind == "category") expected = held_out_by_category.count(r.group) ? held_out_by_category[r.group] : 0;
    else if (r.group_kind == "depth") expected = held_out_by_depth.count(r.group) ? held_out_by_depth[r.group] : 0;
    if (expected < 0) problems.push_back("calibration.sqlite: arc_audit group kind '" + r.group_kind + "' is unknown");
    else if (r.samples != expected)
      problems.push_back("calibration.sqlite: arc_audit " + r.group_kind + " '" + r.group + "' counts " + std::to_string(r.samples) +
                         " samples, calibration.h5 holds " + std::to_string(expected) + " held-out samples there");
    else if (r.covered < 0 || r.covered > r.samples)
      problems.push_back("calibration.sqlite: arc_audit " + r.group_kind + " '" + r.group + "' covers " + std::to_string(r.covered) +
                         " of " + std::to_string(r.samples) + " samples");
  }
}

// Runs within the plan, each once, with a value per axis and an 'overall' row last; the chosen
// run among them.
void check_sweep(const SweepCalibration& sweep, std::vector<std::string>& problems) {
  const std::string name = std::string(kSweepCalibration) + "." + sweep.family;
  check_counts(name, sweep.provenance, derived_counts(sweep), problems);
  std::set<int32_t> seen;
  for (const SweepRun& r : sweep.runs) {
    const std::string run = "calibration.sqlite: sweep " + sweep.family + " run " + std::to_string(r.index);
    if (r.index < 0 || r.index >= sweep.planned_runs)
      problems.push_back(run + " is outside the " + std::to_string(sweep.planned_runs) + " planned runs");
    if (!seen.insert(r.index).second) problems.push_back(run + " appears twice");
    if (r.values.size() != sweep.grid.size())
      problems.push_back(run + " has " + std::to_string(r.values.size()) + " values for " + std::to_string(sweep.grid.size()) + " grid axes");
    if (r.stats.empty() || r.stats.back().category != "overall") problems.push_back(run + " lacks its 'overall' row (last)");
  }
  if (sweep.chosen && !seen.count(*sweep.chosen))
    problems.push_back("manifest.json: calibrations.sweep." + sweep.family + ".chosen is run " + std::to_string(*sweep.chosen) +
                       ", which calibration.sqlite lacks");
}

}  // namespace

std::vector<std::string> consistency_problems(const Artifact& artifact) {
  std::vector<std::string> problems;
  std::set<std::string> families;
  for (const SweepCalibration& sweep : artifact.sweeps) {
    if (!families.insert(sweep.family).second) problems.push_back("manifest.json: two sweeps of " + sweep.family);
    check_sweep(sweep, problems);
  }
  if (const auto& arc = artifact.arc) check_arc(*arc, problems);
  if (const auto& csd = artifact.csd) {
    check_counts(kCsdPolicy, csd->provenance, derived_counts(*csd), problems);
    check_prompt_indices(kCsdPolicy, csd->prompts, problems);
    int64_t listed = 0;
    std::set<int32_t> indices;
    for (const CalibratedPrompt& p : csd->prompts) {
      listed += p.rejections;
      indices.insert(p.index);
    }
    if (listed != static_cast<int64_t>(csd->rejections.size()))
      problems.push_back("calibration.sqlite: the csd prompts count " + std::to_string(listed) +
                         " rejections, calibration.h5 holds " + std::to_string(csd->rejections.size()));
    for (const CsdRejection& r : csd->rejections)
      if (!indices.count(r.prompt)) {
        problems.push_back("calibration.h5: a rejection of prompt " + std::to_string(r.prompt) +
                           ", which the csd prompts table lacks");
        break;
      }
    if (csd->pairs != summarize_pairs(csd->rejections))
      problems.push_back("calibration.sqlite: csd_pairs does not summarize the rejections in calibration.h5");
  }
  if (const auto& sam = artifact.sam_corpus) {
    check_counts(kSamCorpusPolicy, sam->provenance, derived_counts(*sam), problems);
    check_prompt_indices(kSamCorpusPolicy, sam->prompts, problems);
    if (sam->documents.size() != sam->prompts.size())
      problems.push_back("calibration.h5: " + std::to_string(sam->documents.size()) + " sam_corpus documents for " +
                         std::to_string(sam->prompts.size()) + " prompts in calibration.sqlite");
  }
  return problems;
}

}  // namespace specd
