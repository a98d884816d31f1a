#include "speculative/calibrated_parts.h"

#include "artifact/artifact.h"
#include "util/error.h"

namespace specd {

void require_calibration(const Artifact* artifact, const std::string& calibration, const std::string& method) {
  if (!artifact) input_error("method " + method, "needs a calibration artifact (made by specd calibrate " + calibration + ")");
  const bool present = calibration == kCsdPolicy ? artifact->csd.has_value()
                       : calibration == kSamCorpusPolicy ? artifact->sam_corpus.has_value()
                                                         : false;
  if (!present) input_error("method " + method, "the artifact holds no " + calibration + " calibration (run specd calibrate " + calibration + ")");
}

std::shared_ptr<const StaticSam> sam_corpus_of(const Artifact* artifact, const ModelConfig& target) {
  if (!artifact || !artifact->sam_corpus) return nullptr;
  const int32_t separator = target.eos_token_ids.empty() ? 0 : static_cast<int32_t>(target.eos_token_ids[0]);
  return std::make_shared<const StaticSam>(artifact->sam_corpus->documents, separator);
}

CsdOptions csd_options_of(const Artifact& artifact, const CsdOptions& requested, bool lambda_set, bool tau_set) {
  CsdOptions options = requested;
  for (const Threshold& t : artifact.thresholds) {
    if (t.policy != kCsdPolicy) continue;
    if (t.name == "lambda" && !lambda_set) options.lambda = static_cast<int64_t>(t.value);
    if (t.name == "tau" && !tau_set) options.tau = t.value;
  }
  return options;
}

std::shared_ptr<CorrectionMemory> csd_memory_of(const Artifact& artifact) {
  auto memory = std::make_shared<CorrectionMemory>();
  if (artifact.csd)
    for (const CsdPair& pair : artifact.csd->pairs) memory->set(pair.draft_token, pair.target_token, pair.count);
  return memory;
}

}  // namespace specd
