#pragma once
// What must hold between an artifact's three files: the counts the manifest records against the
// rows, the CSD memory against the rejections it summarizes, documents against prompts.
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

// One line per problem, each starting with the file it concerns ("manifest.json: ...",
// "calibration.sqlite: ...", "calibration.h5: ..."); empty when consistent.
std::vector<std::string> consistency_problems(const Artifact& artifact);

}  // namespace specd
