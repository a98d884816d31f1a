#include "speculative/calibrated_parts.h"

#include <cmath>
#include <sstream>

#include "artifact/artifact.h"
#include "util/error.h"

namespace specd {

void require_calibration(const Artifact* artifact, const std::string& calibration, const std::string& method) {
  if (!artifact) input_error("method " + method, "needs a calibration artifact (made by specd calibrate " + calibration + ")");
  const bool present = calibration == kCsdPolicy ? artifact->csd.has_value()
                       : calibration == kSamCorpusPolicy ? artifact->sam_corpus.has_value()
                       : calibration == kArcPolicy       ? artifact->arc.has_value()
                                                         : false;
  if (!present) input_error("method " + method, "the artifact holds no " + calibration + " calibration (run specd calibrate " + calibration + ")");
}

std::shared_ptr<const StaticSam> sam_corpus_of(const Artifact* artifact, const ModelConfig& target) {
  if (!artifact || !artifact->sam_corpus) return nullptr;
  const int32_t separator = target.eos_token_ids.empty() ? 0 : static_cast<int32_t>(target.eos_token_ids[0]);
  return std::make_shared<const StaticSam>(artifact->sam_corpus->documents, separator);
}

std::shared_ptr<CorrectionMemory> csd_memory_of(const Artifact& artifact) {
  auto memory = std::make_shared<CorrectionMemory>();
  if (artifact.csd)
    for (const CsdPair& pair : artifact.csd->pairs) memory->set(pair.draft_token, pair.target_token, pair.count);
  return memory;
}

namespace {

std::string settings_text(double temperature, int64_t top_k, double top_p) {
  std::ostringstream text;
  text << "temperature " << temperature << ", top-k " << top_k << ", top-p " << top_p;
  return text.str();
}

}  // namespace

ArcLtsConstants arc_constants_of(const Artifact& artifact, const SamplingParams& sampling, int64_t hidden_size,
                                 const std::string& artifact_name) {
  if (!artifact.arc) input_error(artifact_name, "holds no arc calibration (run specd calibrate arc)");
  const ArcCalibration& arc = *artifact.arc;
  const CalibrationProvenance& made = arc.provenance;
  // Exact comparison: both sides are the same decimal option values parsed the same way.
  if (made.temperature != sampling.temperature || made.top_k != sampling.top_k || made.top_p != sampling.top_p)
    input_error(artifact_name, "its arc constants were calibrated for " + settings_text(made.temperature, made.top_k, made.top_p) +
                                   ", this run samples with " + settings_text(sampling.temperature, sampling.top_k, sampling.top_p) +
                                   " (calibrate arc at these settings)");
  if (arc.constants.empty()) input_error(artifact_name, "its arc calibration holds no constants (a shard: merge the shards with specd artifact merge)");
  const ArcConstants& all = arc.constants.front();
  if (!(all.tau_delta > 0.0) || !std::isfinite(all.tau_delta) || !(all.c_s >= 0.0) || !(all.alpha_kappa >= 0.0))
    input_error(artifact_name, "its arc constants are unusable (tau_delta must be positive, c_s and alpha_kappa not negative)");
  if (!(arc.epsilon > 0.0)) input_error(artifact_name, "its arc epsilon clamp must be positive");
  if (static_cast<int64_t>(arc.whitening.size()) != hidden_size)
    input_error(artifact_name, "its arc whitening has " + std::to_string(arc.whitening.size()) + " entries, the target's hidden size is " +
                                   std::to_string(hidden_size));
  ArcLtsConstants constants;
  constants.c_s = all.c_s;
  constants.alpha_kappa = all.alpha_kappa;
  constants.tau_delta = all.tau_delta;
  constants.epsilon = arc.epsilon;
  constants.whitening = arc.whitening;
  // Buckets are served when fitted: a bucket with too few samples carries "all" anyway.
  if (arc.constants.size() > 1) constants.buckets = arc.constants;
  return constants;
}

}  // namespace specd
