#pragma once
// What the calibrated policies take from a pair's artifact (runtime/artifact/artifact.h): CSD's
// correction memory and thresholds, SAM's static corpus. The artifact was bound to the models by
// check_pair when it was opened; these only read it.
#include <memory>
#include <string>

#include "io/model_config.h"
#include "sampling/sampler.h"
#include "speculative/arc_acceptor.h"
#include "speculative/correction_memory.h"
#include "speculative/csd_acceptor.h"
#include "speculative/sam_corpus.h"

namespace specd {

struct Artifact;

// InputError when the method needs a calibration the artifact lacks (or no artifact was given).
void require_calibration(const Artifact* artifact, const std::string& calibration, const std::string& method);

// The artifact's static corpus, or null (no artifact, or none calibrated).
std::shared_ptr<const StaticSam> sam_corpus_of(const Artifact* artifact, const ModelConfig& target);

// A fresh memory holding the artifact's calibrated pair counts (each policy built gets its own,
// shared by the requests decoded with that policy).
std::shared_ptr<CorrectionMemory> csd_memory_of(const Artifact& artifact);

// ARC's LTS constants from the artifact's ARC calibration: bucket "all" (constants[0]) and the
// buckets beside it (served by depth and root entropy), its epsilon clamp and whitening. InputError naming `artifact_name` when the
// calibration was made for other sampling settings than `sampling` (temperature, top-k, top-p:
// the constants depend on them), holds no constants, a tau_delta that is not positive, or a
// whitening whose size is not the target's hidden size.
ArcLtsConstants arc_constants_of(const Artifact& artifact, const SamplingParams& sampling, int64_t hidden_size,
                                 const std::string& artifact_name);

}  // namespace specd
