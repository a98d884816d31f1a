#pragma once
// What must hold between an artifact's three files: the counts the manifest records against the
// rows, the CSD memory against the rejections it summarizes, documents against prompts, ARC's
// samples against its prompts, its "all" constants and audit rows against the samples they count.
// (The whitening's length equals the target's hidden size: checkable only with the model.)
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "artifact/artifact.h"

namespace specd {

// The counts that follow from a calibration's rows. CSD: prompts, new_tokens, steps, drafted,
// accepted (sums over the prompt rows), rejections (events), pairs. SAM corpus: prompts,
// new_tokens, documents, tokens. A provenance's counts may hold more keys; these must match.
nlohmann::json derived_counts(const CsdCalibration& csd);
nlohmann::json derived_counts(const SamCorpusCalibration& sam_corpus);
// ARC: prompts, new_tokens, steps, drafted, accepted, calibration_samples (not held out),
// held_out_samples.
nlohmann::json derived_counts(const ArcCalibration& arc);
// Sweep: runs (stored runs).
nlohmann::json derived_counts(const SweepCalibration& sweep);

// The manifest's "all" constants (`manifest`: none, or the one parsed from manifest.json) against
// the arc_constants rows of calibration.sqlite (`tables`, "all" first); one line per problem.
std::vector<std::string> arc_manifest_problems(const std::vector<ArcConstants>& manifest, const std::vector<ArcConstants>& tables);

// One line per problem, each starting with the file it concerns ("manifest.json: ...",
// "calibration.sqlite: ...", "calibration.h5: ..."); empty when consistent.
std::vector<std::string> consistency_problems(const Artifact& artifact);

}  // namespace specd
