#pragma once
// What `specd artifact inspect` shows: for whom an artifact was made (the pair's fingerprints),
// how (tool, commit, time, command lines, seeds, sampling, options) and what it holds (counts,
// thresholds, CSD's most frequent pairs), as JSON and as text made from that JSON.
#include <cstddef>
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "artifact/artifact.h"

namespace specd {

// The manifest's fields plus, per calibration, rows counted from the files, and for CSD its
// `top_pairs` most frequent pairs (token ids with count and gap quantiles) and Pareto shares, for
// ARC its constants per bucket (`buckets`), held-out audit rows (`audit`) and whitening size.
nlohmann::json artifact_summary(const std::string& dir, const Artifact& artifact, size_t top_pairs);

// A few lines per calibration; hashes shortened to 12 hex digits.
void print_artifact_summary(std::ostream& out, const nlohmann::json& summary);

// "csd: 181 prompts, 2345 rejections, 812 pairs; sam_corpus: 181 documents, 23012 tokens; arc: 181
// prompts, 900 calibration samples, 300 held-out samples, 1 buckets" (or "no calibrations").
std::string artifact_contents_line(const Artifact& artifact);

}  // namespace specd
