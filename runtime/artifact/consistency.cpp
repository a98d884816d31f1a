#include "artifact/consistency.h"

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

std::vector<std::string> consistency_problems(const Artifact& artifact) {
  std::vector<std::string> problems;
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
